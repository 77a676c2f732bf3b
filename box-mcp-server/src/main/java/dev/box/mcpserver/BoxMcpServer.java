package dev.box.mcpserver;

import dev.box.agenthost.OutputCut;
import dev.box.client.BoxClient;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.server.transport.StdioServerTransportProvider;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.concurrent.CountDownLatch;
import java.util.function.Supplier;

/**
 * Box as an MCP server over stdio, the way Claude Desktop and IDE agents launch local servers: the
 * sandbox tools of a Box server, reached with a {@link BoxClient}.
 *
 * <p>Why a client and not the server's core: the same tools then serve {@code box mcp} (a process
 * of its own, next to any running server) and the {@code /mcp} endpoint of {@code box serve}
 * (through a client of the server's own port, see {@link McpHttpEndpoint}), with one
 * implementation, the API's own checks and limits, and no dependency of the server on the SDK.
 */
public final class BoxMcpServer {
  /** The name the server gives itself in the MCP handshake. */
  public static final String NAME = "box";

  static final String INSTRUCTIONS =
      "Box runs commands in isolated sandboxes. Each session_id names a sandbox with a persistent"
          + " /workspace; exec, write_file and start_process create it when missing. Outputs are"
          + " cut to 4,000 characters (head and tail kept) and flagged *_truncated when they were.";

  private BoxMcpServer() {}

  /**
   * Serves MCP on {@code in} and {@code out} (newline-delimited JSON-RPC) until {@code in} ends,
   * then stops following processes (they keep running in their sessions) and returns.
   *
   * @param client the Box server the tools act on; not closed here
   * @param version the version the server reports in the MCP handshake
   * @throws InterruptedException when interrupted while serving
   */
  public static void serveStdio(BoxClient client, InputStream in, OutputStream out, String version)
      throws InterruptedException {
    CountDownLatch ended = new CountDownLatch(1);
    StdioServerTransportProvider transport =
        new StdioServerTransportProvider(
            McpJsonDefaults.getMapper(), new EndSignal(in, ended), out);
    ProcessOutputs outputs = new ProcessOutputs(OutputCut.DEFAULT_LIMIT);
    McpSyncServer server = configure(McpServer.sync(transport), () -> client, outputs, version);
    try {
      ended.await();
    } finally {
      outputs.close();
      server.close();
    }
  }

  /** {@code spec} with the sandbox tools over {@code client}, built. */
  static McpSyncServer configure(
      McpServer.SyncSpecification<?> spec,
      Supplier<BoxClient> client,
      ProcessOutputs outputs,
      String version) {
    return spec.serverInfo(NAME, version)
        .instructions(INSTRUCTIONS)
        .capabilities(McpSchema.ServerCapabilities.builder().tools(false).build())
        // The tools check their arguments themselves, with messages that name the argument.
        .validateToolInputs(false)
        .tools(new SandboxTools(client, outputs).specifications())
        .build();
  }

  /** An input stream that counts down a latch when it ends or fails. */
  private static final class EndSignal extends FilterInputStream {
    private final CountDownLatch ended;

    EndSignal(InputStream in, CountDownLatch ended) {
      super(in);
      this.ended = ended;
    }

    @Override
    public int read() throws IOException {
      return watch(() -> super.read());
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      return watch(() -> super.read(b, off, len));
    }

    private int watch(Read read) throws IOException {
      try {
        int n = read.run();
        if (n < 0) {
          ended.countDown();
        }
        return n;
      } catch (IOException | RuntimeException e) {
        ended.countDown();
        throw e;
      }
    }

    private interface Read {
      int run() throws IOException;
    }
  }
}
