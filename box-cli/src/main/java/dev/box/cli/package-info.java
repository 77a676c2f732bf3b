/**
 * The {@code box} command: {@code box serve} runs the server, and the client commands ({@code
 * exec}, {@code sessions}, {@code session rm}, {@code status}) talk to one through {@link
 * dev.box.client.BoxClient}.
 */
@NullMarked
package dev.box.cli;

import org.jspecify.annotations.NullMarked;
