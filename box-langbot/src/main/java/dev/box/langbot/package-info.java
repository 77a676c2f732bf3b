/**
 * LangBot's action-RPC control channel over the core: the JSON envelope, the actions, control-plane
 * auth, and the tenancy layer (physical session ids and the placement-generation fence). It knows
 * no HTTP library; the server and the stdio mode are thin transports around {@link
 * dev.box.langbot.ControlConnection}.
 */
@NullMarked
package dev.box.langbot;

import org.jspecify.annotations.NullMarked;
