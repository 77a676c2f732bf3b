package dev.box.agenthost;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.box.api.BoxExecutionStatus;
import dev.box.api.BoxNetworkMode;
import dev.box.api.BoxRuntimeUnavailableException;
import dev.box.api.BoxSessionInfo;
import dev.box.api.BoxSpec;
import dev.box.api.BoxValidationException;
import dev.box.api.internal.FileTrees;
import dev.box.client.BoxClient;
import dev.box.client.LiveBox;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The agent host in front of a real Box server running real bubblewrap sandboxes. */
class AgentHostTest {
  @RegisterExtension static final LiveBox box = LiveBox.perClass();

  private static final SessionContext ALICE = SessionContext.of("person", "alice", "alice");

  @Test
  void exec_runsInTheConversationsSession_andCutsOutputForTheModel() {
    try (AgentHost host = AgentHost.builder(box.client()).build().start()) {
      assertThat(host.available()).isTrue();

      ExecToolResult out = host.exec(ALICE, ExecRequest.of("printf 'hi'; echo oops >&2; exit 3"));

      assertThat(out.sessionId()).isEqualTo("person_alice");
      assertThat(out.backend()).isEqualTo("bwrap");
      assertThat(out.status()).isEqualTo(BoxExecutionStatus.COMPLETED);
      assertThat(out.ok()).isFalse();
      assertThat(out.exitCode()).isEqualTo(3);
      assertThat(out.stdout()).isEqualTo("hi");
      assertThat(out.stderr()).isEqualTo("oops\n");
      assertThat(out.stdoutTruncated()).isFalse();

      ExecToolResult big =
          host.exec(ALICE, ExecRequest.of("head -c 10000 /dev/zero | tr '\\0' a; echo END"));

      assertThat(big.stdoutTruncated()).isTrue();
      assertThat(big.stdout()).hasSizeLessThanOrEqualTo(4000).startsWith("aaa").endsWith("END\n");
      assertThat(big.stdout()).contains("characters truncated] ...");
    }
  }

  @Test
  void forcedTemplate_winsOverTheCallers_onTheServer() {
    try (AgentHost host =
        AgentHost.builder(box.client())
            .forcedSessionTemplate(SessionIdTemplate.GLOBAL)
            .build()
            .start()) {
      ExecToolResult out = host.exec(ALICE, SessionIdTemplate.PER_USER, ExecRequest.of("true"));

      assertThat(out.sessionId()).isEqualTo("global");
      assertThat(box.client().session("global").sessionId()).isEqualTo("global");
    }
  }

  @Test
  void profile_locksTheNetworkAndClampsTheTimeout() {
    try (AgentHost host =
        AgentHost.builder(box.client()).profile("offline_readonly").build().start()) {
      ExecRequest asked =
          ExecRequest.builder("true")
              .sandbox(SandboxSettings.builder().network(BoxNetworkMode.ON).build())
              .timeoutSec(500)
              .build();
      BoxSpec spec = host.spec("locked", asked);
      assertThat(spec.timeoutSec()).isEqualTo(60);
      assertThat(spec.network()).isEqualTo(BoxNetworkMode.OFF);

      host.exec("locked", asked);

      BoxSessionInfo session = box.client().session("locked");
      assertThat(session.network()).isEqualTo(BoxNetworkMode.OFF);
      assertThat(session.memoryMb()).isEqualTo(256);
      assertThat(session.readOnlyRootfs()).isTrue();
    }
  }

  @Test
  void workspaceQuota_isCheckedAfterAnExec_deletesTheSession_andRefusesTheNext()
      throws IOException {
    Path workspace = sandboxWritableDir();
    try (AgentHost host =
        AgentHost.builder(box.client()).workspace(workspace).workspaceQuotaMb(1).build().start()) {
      ExecToolResult small = host.exec("quota", ExecRequest.of("echo hi > /workspace/small; ls"));
      assertThat(small.stdout()).isEqualTo("small\n");
      assertThat(workspace.resolve("small")).hasContent("hi");

      assertThatThrownBy(
              () -> host.exec("quota", ExecRequest.of("head -c 2000000 /dev/zero > big")))
          .isInstanceOf(BoxValidationException.class)
          .hasMessageStartingWith("workspace quota exceeded after execution: used=2000003 bytes")
          .hasMessageEndingWith("session_id=quota");
      assertThat(box.client().sessions())
          .extracting(BoxSessionInfo::sessionId)
          .doesNotContain("quota");

      assertThatThrownBy(() -> host.exec("quota", ExecRequest.of("true")))
          .hasMessageStartingWith("workspace quota exceeded before execution");
      AgentHostStatus status = host.status();
      assertThat(status.available()).isTrue();
      assertThat(status.profile()).isEqualTo("default");
      assertThat(status.recentErrorCount()).isEqualTo(2);
      assertThat(status.runtime()).isNotNull();
      assertThat(status.connectorError()).isNull();
    } finally {
      FileTrees.deleteTreeQuietly(workspace);
    }
  }

  /** A temporary directory the sandbox user (another uid than this JVM's) may write to. */
  static Path sandboxWritableDir() throws IOException {
    Path dir = Files.createTempDirectory("box-agent-host-workspace-");
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
    return dir;
  }

  @Test
  void unreachableServer_isUnavailable_andExecIsRefusedAndRecorded() throws IOException {
    int closedPort;
    try (ServerSocket socket = new ServerSocket(0)) {
      closedPort = socket.getLocalPort();
    }
    try (BoxClient nowhere = BoxClient.connect(URI.create("http://127.0.0.1:" + closedPort))) {
      AgentHost host = AgentHost.builder(nowhere).build();
      assertThat(host.availability().probeNow()).isFalse();

      assertThatThrownBy(() -> host.exec(ALICE, ExecRequest.of("true")))
          .isInstanceOf(BoxRuntimeUnavailableException.class)
          .hasMessageStartingWith("Box runtime is not available: Cannot reach Box runtime");
      AgentHostStatus status = host.status();
      assertThat(status.available()).isFalse();
      assertThat(status.runtime()).isNull();
      assertThat(status.recentErrors())
          .singleElement()
          .satisfies(e -> assertThat(e.type()).isEqualTo("BoxRuntimeUnavailableException"));
    }
  }
}
