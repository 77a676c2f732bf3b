/**
 * What the backends whose sandboxes are remote machines share (E2B's sandboxes, BoxLite's boxes): a
 * sandbox's life and its processes' environment, the sweep of the machines an earlier server left,
 * and printable excerpts of what the remote side sent.
 */
@NullMarked
package dev.box.remote;

import org.jspecify.annotations.NullMarked;
