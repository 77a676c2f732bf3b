/**
 * Time as Box reads it: an injected monotonic {@link dev.box.api.time.Ticker}, so tests advance a
 * fake one instead of sleeping. The server and the client SDK each choose the system ticker in
 * their composition root and hand it down.
 */
@NullMarked
package dev.box.api.time;

import org.jspecify.annotations.NullMarked;
