/**
 * The Box benchmark: an in-process server measured over HTTP against the floors of a bare bwrap
 * spawn and a plain fork and exec, and its stdio relay over WebSocket against a plain {@code cat}
 * child and a plain pipe. Run {@link dev.box.bench.BoxBench}.
 */
@NullMarked
package dev.box.bench;

import org.jspecify.annotations.NullMarked;
