/**
 * The container backends: Docker and Podman through the Engine API on a Unix socket, with hardened
 * containers and process trees killed inside the container.
 */
@NullMarked
package dev.box.backend.docker;

import org.jspecify.annotations.NullMarked;
