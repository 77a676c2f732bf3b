/** The HTTP adapter: routes, authentication and the one mapping of errors to HTTP answers. */
@NullMarked
package dev.box.server.http;

import org.jspecify.annotations.NullMarked;
