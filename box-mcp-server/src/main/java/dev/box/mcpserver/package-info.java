/**
 * Box as an MCP server: a sandbox as tools ({@code exec}, {@code read_file}, {@code write_file},
 * {@code list_files}, {@code start_process}, {@code process_output}, {@code stop_process}, {@code
 * delete_session}) for any MCP client, over stdio ({@link
 * dev.box.mcpserver.BoxMcpServer#serveStdio}) or streamable HTTP ({@link
 * dev.box.mcpserver.McpHttpEndpoint}), built on the official MCP Java SDK's server side over a
 * {@link dev.box.client.BoxClient}.
 */
@NullMarked
package dev.box.mcpserver;

import org.jspecify.annotations.NullMarked;
