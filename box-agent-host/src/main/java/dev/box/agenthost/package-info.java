/**
 * The agent host: what an agent needs around a {@link dev.box.client.BoxClient}, as LangBot's Box
 * service gives it to LangBot. {@link dev.box.agenthost.AgentHost} is the entry point: it watches
 * the server (heartbeat, reconnect with backoff), names sessions from templates, applies a profile,
 * cuts output for a model, checks an advisory workspace quota, keeps the recent errors, and
 * launches stdio MCP servers in sandboxes ({@link dev.box.agenthost.McpLauncher}).
 */
@NullMarked
package dev.box.agenthost;

import org.jspecify.annotations.NullMarked;
