/**
 * The Docker Engine API (and Podman's compatible API) over its Unix socket, for every backend that
 * talks to a container engine: the container backends run sessions in it, the microvm backend
 * exports a session's image from it.
 */
@NullMarked
package dev.box.sandbox.engine;

import org.jspecify.annotations.NullMarked;
