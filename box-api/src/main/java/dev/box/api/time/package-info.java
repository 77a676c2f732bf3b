/**
 * Time as the runtime reads it: an injected monotonic {@link dev.box.core.time.Ticker}, so tests
 * advance a fake one instead of sleeping.
 */
@NullMarked
package dev.box.core.time;

import org.jspecify.annotations.NullMarked;
