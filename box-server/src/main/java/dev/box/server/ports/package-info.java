/**
 * A sandbox's TCP ports reached through Box: HTTP/1.1 and upgraded connections relayed through a
 * pipe process inside the sandbox, and the preview links that open them without the control token.
 */
@NullMarked
package dev.box.server.ports;

import org.jspecify.annotations.NullMarked;
