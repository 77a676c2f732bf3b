package dev.box.mcpserver;

import dev.box.agenthost.OutputCut;
import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.client.BoxClient;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.server.transport.HttpServletStreamableServerTransportProvider;
import jakarta.servlet.http.HttpServlet;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;

/**
 * Box as an MCP server over streamable HTTP: a servlet (the SDK's streamable-HTTP transport) that a
 * Box server mounts on its own port, as {@code box serve} does at {@code /mcp}.
 *
 * <p>The servlet must exist before the server starts, and the client of the server can only be made
 * once it listens (its port may be chosen then): create the endpoint, mount {@link #servlet()},
 * start the server, then {@link #connect} the client. A tool called before that is an error result
 * saying so. Authentication is the mounting server's: the endpoint itself checks nothing.
 */
public final class McpHttpEndpoint implements AutoCloseable {
  private final HttpServletStreamableServerTransportProvider transport;
  private final ProcessOutputs outputs = new ProcessOutputs(OutputCut.DEFAULT_LIMIT);
  private final AtomicReference<@Nullable BoxClient> client = new AtomicReference<>();
  private final McpSyncServer server;

  private McpHttpEndpoint(String path, String version) {
    transport =
        HttpServletStreamableServerTransportProvider.builder()
            .jsonMapper(McpJsonDefaults.getMapper())
            .mcpEndpoint(path)
            .build();
    server = BoxMcpServer.configure(McpServer.sync(transport), this::client, outputs, version);
  }

  /**
   * An endpoint to be served at {@code path}.
   *
   * @param path the path it is mounted at, as {@code /mcp}; the transport answers requests to it
   *     only
   * @param version the version the server reports in the MCP handshake
   */
  public static McpHttpEndpoint create(String path, String version) {
    return new McpHttpEndpoint(path, version);
  }

  /** The servlet to mount at the endpoint's path; it needs asynchronous processing. */
  public HttpServlet servlet() {
    return transport;
  }

  /**
   * Gives the tools the client of the server they act on. Call once; the endpoint closes the client
   * when it closes.
   *
   * @throws IllegalStateException when a client was given already
   */
  public void connect(BoxClient boxClient) {
    if (!client.compareAndSet(null, boxClient)) {
      throw new IllegalStateException("the endpoint is connected already");
    }
  }

  private BoxClient client() {
    BoxClient connected = client.get();
    if (connected == null) {
      throw new BoxException(
          BoxErrorCode.BACKEND_UNAVAILABLE, "the Box server behind this endpoint is starting");
    }
    return connected;
  }

  /** Ends the MCP sessions, stops following processes and closes the client. */
  @Override
  public void close() {
    server.close();
    outputs.close();
    BoxClient connected = client.getAndSet(null);
    if (connected != null) {
      connected.close();
    }
  }
}
