/**
 * The Java client of the Box HTTP API: {@link dev.box.client.BoxClient} sends the wire model of
 * {@code dev.box.api} and turns error answers back into the server's {@link
 * dev.box.api.BoxException} subtypes.
 */
@NullMarked
package dev.box.client;

import org.jspecify.annotations.NullMarked;
