package dev.box.cli;

import dev.box.api.BoxRuntimeUnavailableException;
import dev.box.client.BoxClient;
import dev.box.mcpserver.BoxMcpServer;
import dev.box.server.BoxServer;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.OutputStream;
import picocli.CommandLine.Command;

/**
 * {@code box mcp}: an MCP server on stdin/stdout whose tools run in the sandboxes of a running Box
 * server, for MCP clients that launch their servers as commands (Claude Desktop, IDE agents).
 *
 * <p>Stdout carries the protocol only: everything else printed goes to stderr. A token the server
 * refuses ends the command at once (exit 1), since no tool could work; a server that cannot be
 * reached yet is only a warning, and each tool call reports it until the server is up.
 */
@Command(
    name = "mcp",
    description = {
      "Serves MCP over stdin/stdout: the sandboxes of a running Box server as tools (exec,"
          + " read_file, write_file, list_files, start_process, process_output, stop_process,"
          + " delete_session).",
      "Point an MCP client's command at it, for example: box mcp --url http://127.0.0.1:5410"
          + " --token TOKEN"
    })
final class McpCommand extends ClientCommand {

  @Override
  int run(BoxClient client) {
    OutputStream protocol = new FileOutputStream(FileDescriptor.out);
    System.setOut(System.err);
    try {
      client.status();
    } catch (BoxRuntimeUnavailableException e) {
      err()
          .println(
              "box: warning: "
                  + client.baseUri()
                  + " cannot be reached yet ("
                  + e.getMessage()
                  + "); serving anyway, tools fail until it answers");
    }
    try {
      BoxMcpServer.serveStdio(client, System.in, protocol, BoxServer.VERSION);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return 0;
  }
}
