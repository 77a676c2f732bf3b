/**
 * File-tree operations the runtime shares across modules, written so that a link inside a tree is
 * never followed out of it.
 */
@NullMarked
package dev.box.core.fs;

import org.jspecify.annotations.NullMarked;
