package dev.box.mcpserver;

import dev.box.agenthost.OutputCut;
import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.client.BoxClient;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.server.transport.HttpServletStreamableServerTransportProvider;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Box as an MCP server over streamable HTTP: a servlet (the SDK's streamable-HTTP transport) that a
 * Box server mounts on its own port, as {@code box serve} does at {@code /mcp}.
 *
 * <p>The servlet must exist before the server starts, and the client of the server can only be made
 * once it listens (its port may be chosen then): create the endpoint, mount {@link #servlet()},
 * start the server, then {@link #connect} the client's maker. A tool called before that is an error
 * result saying so. Authentication is the mounting server's: the endpoint itself checks nothing.
 *
 * <p>Nothing of the SDK is loaded until the first request reaches the servlet: the SDK, its JSON
 * binding and Reactor are several thousand classes, which a server that never serves MCP
 * (LangBot's, for one) should not hold in memory or load at start. The client is made then too.
 */
public final class McpHttpEndpoint implements AutoCloseable {
  private final String path;
  private final String version;
  private final ProcessOutputs outputs = new ProcessOutputs(OutputCut.DEFAULT_LIMIT);
  private final HttpServlet servlet = new LazyServlet();
  private @Nullable Supplier<BoxClient> clientMaker;
  private @Nullable BoxClient client;
  private @Nullable Served served;
  private boolean closed;

  /** The SDK's side, made at the first request. */
  private record Served(
      HttpServletStreamableServerTransportProvider transport, McpSyncServer server) {}

  private McpHttpEndpoint(String path, String version) {
    this.path = path;
    this.version = version;
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
    return servlet;
  }

  /**
   * Gives the tools what makes the client of the server they act on, called at the first tool call.
   * Call once; the endpoint closes the client when it closes.
   *
   * @throws IllegalStateException when a maker was given already
   */
  public synchronized void connect(Supplier<BoxClient> maker) {
    if (clientMaker != null) {
      throw new IllegalStateException("the endpoint is connected already");
    }
    clientMaker = maker;
  }

  private synchronized BoxClient client() {
    BoxClient made = client;
    if (made != null) {
      return made;
    }
    Supplier<BoxClient> maker = clientMaker;
    if (maker == null || closed) {
      throw new BoxException(
          BoxErrorCode.BACKEND_UNAVAILABLE, "the Box server behind this endpoint is starting");
    }
    made = maker.get();
    client = made;
    return made;
  }

  /** The SDK's transport, made (and initialised with {@code servlet}'s configuration) once. */
  private synchronized HttpServletStreamableServerTransportProvider transport()
      throws ServletException {
    if (closed) {
      throw new ServletException("the MCP endpoint is closed");
    }
    Served made = served;
    if (made == null) {
      HttpServletStreamableServerTransportProvider transport =
          HttpServletStreamableServerTransportProvider.builder()
              .jsonMapper(McpJsonDefaults.getMapper())
              .mcpEndpoint(path)
              .build();
      transport.init(servlet.getServletConfig());
      made =
          new Served(
              transport,
              BoxMcpServer.configure(McpServer.sync(transport), this::client, outputs, version));
      served = made;
    }
    return made.transport();
  }

  /** Ends the MCP sessions, stops following processes and closes the client. */
  @Override
  public void close() {
    Served made;
    BoxClient connected;
    synchronized (this) {
      closed = true;
      made = served;
      served = null;
      connected = client;
      client = null;
    }
    if (made != null) {
      made.server().close();
    }
    outputs.close();
    if (connected != null) {
      connected.close();
    }
  }

  /** The servlet the server mounts: it hands every request to the SDK's, made at the first. */
  private final class LazyServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response)
        throws ServletException, IOException {
      transport().service(request, response);
    }
  }
}
