/**
 * The backend SPI: what a sandbox technology (bubblewrap, containers, ...) must provide to run Box
 * sessions.
 */
@NullMarked
package dev.box.core.backend;

import org.jspecify.annotations.NullMarked;
