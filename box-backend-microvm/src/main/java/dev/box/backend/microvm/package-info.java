/**
 * The microvm backend: each session is a QEMU micro-VM (machine type {@code microvm}, TCG) with its
 * own guest kernel, whose processes start through the exec agent in the guest, reached over a host
 * loopback port that QEMU's user-mode network forwards to it.
 */
@NullMarked
package dev.box.backend.microvm;

import org.jspecify.annotations.NullMarked;
