/**
 * The Box runtime: the domain behind every protocol adapter, independent of HTTP and of any backend
 * library.
 */
@NullMarked
package dev.box.core;

import org.jspecify.annotations.NullMarked;
