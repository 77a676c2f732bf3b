/** The Box server: configuration, backend selection and the composition of the runtime. */
@NullMarked
package dev.box.server;

import org.jspecify.annotations.NullMarked;
