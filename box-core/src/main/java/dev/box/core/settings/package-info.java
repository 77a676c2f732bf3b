/**
 * The settings both the server ({@code box serve}) and LangBot's {@code box_init} read: the table
 * of runtime limits with their defaults and ranges, and the one way a boolean setting reads text.
 */
@NullMarked
package dev.box.core.settings;

import org.jspecify.annotations.NullMarked;
