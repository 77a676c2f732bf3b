/**
 * The BoxLite backend: sessions as BoxLite boxes (hardware-isolated micro-VMs), created and driven
 * through the REST API of a BoxLite server ({@code boxlite serve}): box lifecycle, executions and
 * their attach WebSocket.
 */
@NullMarked
package dev.box.backend.boxlite;

import org.jspecify.annotations.NullMarked;
