package dev.box.agenthost;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.box.api.BoxHostMountMode;
import dev.box.api.BoxManagedProcessNotFoundException;
import dev.box.api.BoxMountSpec;
import dev.box.api.BoxNetworkMode;
import dev.box.api.internal.FileTrees;
import dev.box.client.LiveBox;
import dev.box.testclient.McpFixture;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.TextContent;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A stdio MCP server launched in a real sandbox through the agent host: the reference server
 * "everything" from npm (the fixture box-mcp's tests run), started by a small host project (a shell
 * script) that the launcher stages into the workspace, and one tool called through the returned
 * client.
 */
class McpLauncherTest {
  @RegisterExtension static final LiveBox box = LiveBox.perClass();

  @Test
  void launch_stagesTheProject_startsTheServer_andReturnsAnInitializedClient() throws IOException {
    Path entry = McpFixture.entryPoint();
    String cache = McpFixture.CACHE.toString();
    Path workspace = AgentHostTest.sandboxWritableDir();
    Path project = Files.createTempDirectory("box-mcp-project-");
    Files.writeString(project.resolve("server.sh"), "exec node " + entry + " stdio\n");
    Files.createDirectories(project.resolve(".git"));
    Files.writeString(project.resolve(".git/HEAD"), "ignored\n");
    McpServerConfig config =
        McpServerConfig.builder("everything", "sh", project.resolve("server.sh").toString())
            .sandbox(
                SandboxSettings.builder()
                    .network(BoxNetworkMode.OFF)
                    .extraMount(new BoxMountSpec(cache, cache, BoxHostMountMode.RO))
                    .build())
            .build();

    try (AgentHost host = AgentHost.builder(box.client()).workspace(workspace).build().start()) {
      McpServerHandle server = host.mcp().launch(config);
      Path staged = workspace.resolve(".mcp/everything/workspace");
      try {
        assertThat(server.sessionId()).startsWith("mcp-shared-");
        assertThat(server.retryCount()).isZero();
        assertThat(staged.resolve("server.sh")).exists();
        assertThat(staged.resolve(".git")).as("ignored when staging").doesNotExist();
        assertThat(box.client().process(server.sessionId(), "everything").args())
            .containsExactly("/workspace/.mcp/everything/workspace/server.sh");

        CallToolResult echo =
            server.client().callTool(new CallToolRequest("echo", Map.of("message", "in a box")));
        assertThat(((TextContent) echo.content().getFirst()).text()).isEqualTo("Echo: in a box");
        assertThat(server.checkOnce()).isTrue();
        assertThat(server.health()).isEqualTo(McpServerHandle.Health.RUNNING);
      } finally {
        server.close();
      }
      assertThat(staged).as("deleted on close").doesNotExist();
      assertThatThrownBy(() -> box.client().process(server.sessionId(), "everything"))
          .isInstanceOf(BoxManagedProcessNotFoundException.class);
      assertThat(box.client().session(server.sessionId()).persistent())
          .as("the shared session stays")
          .isTrue();
    } finally {
      FileTrees.deleteTreeQuietly(workspace);
      FileTrees.deleteTreeQuietly(project);
    }
  }

  @Test
  void sessionIds_areSharedPerResourceProfile() {
    assertThat(McpLauncher.sessionId(McpServerConfig.builder("a", "node").build()))
        .isEqualTo("mcp-shared");
    SandboxSettings smaller = SandboxSettings.builder().memoryMb(512).build();
    String small =
        McpLauncher.sessionId(McpServerConfig.builder("a", "node").sandbox(smaller).build());
    assertThat(small).matches("mcp-shared-[0-9a-f]{12}");
    assertThat(
            McpLauncher.sessionId(McpServerConfig.builder("b", "python").sandbox(smaller).build()))
        .isEqualTo(small);
  }

  @Test
  void hostPath_isInferredFromTheCommandLine_withVirtualenvsUnwrapped() throws IOException {
    Path project = Files.createTempDirectory("box-mcp-infer-");
    try {
      Files.createDirectories(project.resolve(".venv/bin"));
      Files.writeString(project.resolve(".venv/bin/python3"), "");
      Files.createDirectories(project.resolve("src"));
      Files.writeString(project.resolve("src/server.py"), "");
      String python = project.resolve(".venv/bin/python3").toString();
      String script = project.resolve("src/server.py").toString();

      assertThat(McpStaging.inferHostPath(python, List.of(script, "--flag"))).isEqualTo(project);
      assertThat(McpStaging.isVenvPython(python, project)).isTrue();
      assertThat(McpStaging.rewrite(script, project, "/workspace/.mcp/p/workspace"))
          .isEqualTo("/workspace/.mcp/p/workspace/src/server.py");
      assertThat(McpStaging.inferHostPath("npx", List.of("-y", "pkg"))).isNull();
    } finally {
      FileTrees.deleteTreeQuietly(project);
    }
  }
}
