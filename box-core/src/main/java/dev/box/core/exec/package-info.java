/** Running one command in a session: the hard timeout and the bounded capture of its output. */
@NullMarked
package dev.box.core.exec;

import org.jspecify.annotations.NullMarked;
