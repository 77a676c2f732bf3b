/**
 * Security policy applied before any request reaches a backend: which host paths may be mounted.
 */
@NullMarked
package dev.box.core.policy;

import org.jspecify.annotations.NullMarked;
