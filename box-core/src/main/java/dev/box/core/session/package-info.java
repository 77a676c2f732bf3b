/** Sessions: create or reuse by id, conflicts, capacity, idle reaping and shutdown. */
@NullMarked
package dev.box.core.session;

import org.jspecify.annotations.NullMarked;
