package dev.box.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.spec.McpClientTransport;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code box mcp} as an MCP client launches it: a child process speaking MCP on its stdio. */
class McpStdioTest extends McpToolsContract {
  @Override
  McpClientTransport transport(URI uri, String token) {
    String java = ProcessHandle.current().info().command().orElseThrow();
    ServerParameters command =
        ServerParameters.builder(java)
            .args(
                "-cp",
                System.getProperty("java.class.path"),
                "dev.box.cli.Main",
                "mcp",
                "--url",
                uri.toString(),
                "--token",
                token)
            .build();
    return new StdioClientTransport(command, McpJsonDefaults.getMapper());
  }

  @Test
  void whenStdinEnds_boxMcpExitsCleanly() throws Exception {
    Process mcp = boxMcp("--token", token());

    mcp.getOutputStream().close();

    assertThat(mcp.waitFor()).isZero();
    assertThat(new String(mcp.getInputStream().readAllBytes(), StandardCharsets.UTF_8)).isEmpty();
  }

  @Test
  void aTokenTheServerRefuses_endsBoxMcpWithTheHint() throws Exception {
    Process mcp = boxMcp("--token", "not-the-token");

    String err = new String(mcp.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);

    assertThat(mcp.waitFor()).isEqualTo(BoxCli.EXIT_BOX_ERROR);
    assertThat(err).contains("unauthorized").doesNotContain("Exception");
  }

  private Process boxMcp(String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of("mcp", "--url", server().uri().toString()));
    command.addAll(List.of(args));
    return ServeProcessTest.command(Path.of("."), Map.of(), command.toArray(String[]::new)).start();
  }
}
