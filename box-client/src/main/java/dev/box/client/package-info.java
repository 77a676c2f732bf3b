/**
 * The Java client of the Box HTTP API: {@link dev.box.client.BoxClient} sends the wire model of
 * {@code dev.box.api} and turns error answers back into the server's {@link
 * dev.box.api.BoxException} subtypes, and {@link dev.box.client.BoxClient#attach} relays a managed
 * process's stdio to a {@link dev.box.client.ProcessListener}, reconnecting and resuming by byte
 * offset when a connection drops.
 */
@NullMarked
package dev.box.client;

import org.jspecify.annotations.NullMarked;
