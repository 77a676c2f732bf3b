/**
 * MCP over Box: {@link dev.box.mcp.BoxMcpClientTransport} lets the official MCP Java SDK's client
 * talk to a stdio MCP server running as a managed process in a Box session, through the Box stdio
 * relay, reconnecting without losing responses when the connection drops.
 */
@NullMarked
package dev.box.mcp;

import org.jspecify.annotations.NullMarked;
