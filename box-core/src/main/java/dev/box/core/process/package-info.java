/**
 * Managed processes: long-running processes in a session, their stdout buffer with byte offsets and
 * their stderr preview.
 */
@NullMarked
package dev.box.core.process;

import org.jspecify.annotations.NullMarked;
