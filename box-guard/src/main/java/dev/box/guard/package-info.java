/**
 * The seccomp filter every sandbox runs under: {@link dev.box.guard.SyscallGuard} installs the
 * static {@code box-guard} helper from this module's jar and tells whether the kernel applies its
 * filter.
 */
@NullMarked
package dev.box.guard;

import org.jspecify.annotations.NullMarked;
