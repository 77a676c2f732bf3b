/** The server's metrics: the runtime's events recorded with Micrometer, scraped as Prometheus. */
@NullMarked
package dev.box.server.metrics;

import org.jspecify.annotations.NullMarked;
