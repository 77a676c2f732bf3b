package dev.box.backend.docker;

import static dev.box.backend.docker.ContainerBackendTest.IMAGE;
import static dev.box.backend.docker.ContainerBackendTest.shell;
import static dev.box.backend.docker.ContainerBackendTest.spec;
import static dev.box.backend.docker.ContainerBackendTest.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.core.agent.AgentSockets;
import dev.box.core.backend.SandboxProcess;
import dev.box.sandbox.SandboxTests;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A container's exec agent is not its PID 1, so code in the container can kill it: the link then
 * breaks, the running process fails with a clear error, and the container is removed, with its
 * agent's socket.
 */
@ParameterizedClass
@ValueSource(strings = {"docker", "podman"})
class ContainerAgentTest {
  private final String engine;
  @TempDir Path dataDir;

  ContainerAgentTest(String engine) {
    this.engine = engine;
  }

  /** Runs {@code body} in a container of the session {@code session} on a backend of its own. */
  private void inSandbox(String session, SandboxTests.Body body) throws Exception {
    ContainerBackendTest.inSandbox(engine, dataDir, spec(session, IMAGE), body);
  }

  @Test
  void aContainerThatKillsItsAgent_endsWithAClearError() throws Exception {
    inSandbox(
        "killer",
        s -> {
          ContainerSandbox sandbox = (ContainerSandbox) s;
          SandboxProcess probe = shell(sandbox, "echo $PPID", "/tmp");
          long agent = Long.parseLong(text(probe).strip());
          probe.release();
          Path socketDir =
              AgentSockets.root(dataDir).resolve(AgentSockets.dirName("inst", sandbox.id()));
          assertThat(socketDir.resolve("socket")).exists();

          SandboxProcess sleeping = shell(sandbox, "sleep 60", "/tmp");
          SandboxProcess killer = shell(sandbox, "kill -9 " + agent, "/tmp");

          assertThatThrownBy(() -> sleeping.waitFor(Duration.ofSeconds(60)))
              .isInstanceOf(BoxException.class)
              .hasMessageContaining("its exec agent closed its connection")
              .extracting(e -> ((BoxException) e).code())
              .isEqualTo(BoxErrorCode.RUNTIME_UNAVAILABLE);
          killer.release();
          await().untilAsserted(() -> assertThat(sandbox.isAlive()).isFalse());
          await().untilAsserted(() -> assertThat(sandbox.running()).isFalse());
          assertThat(Files.exists(socketDir)).isFalse();
        });
  }

  @Test
  void aTimedOutTree_isKilledByItsCgroup_andOnlyIt() throws Exception {
    inSandbox(
        "trees",
        sandbox -> {
          SandboxProcess other = shell(sandbox, "sleep 300", "/tmp");
          SandboxProcess tree =
              shell(sandbox, "(setsid sh -c 'sleep 301' &) ; sleep 302 & sleep 303", "/tmp");
          tree.killTree();
          assertThat(tree.waitFor(Duration.ofSeconds(30))).hasValue(137);
          tree.release();
          SandboxProcess ps = shell(sandbox, "ps -eo args", "/tmp");
          String seen = text(ps);
          ps.release();
          assertThat(seen)
              .contains("sleep 300")
              .doesNotContain("sleep 301", "sleep 302", "sleep 303");
          other.killTree();
          other.release();
        });
  }

  @Test
  void aReleasedTreesCgroup_goesToTheNextTree_andTheReleasedTreesKillNoLongerReachesIt()
      throws Exception {
    Path[] containerCgroup = new Path[1];
    inSandbox(
        "reuse",
        s -> {
          ContainerSandbox sandbox = (ContainerSandbox) s;
          containerCgroup[0] = ContainerCgroup.of(sandbox.initPid()).dir();
          for (int i = 0; i < 5; i++) {
            SandboxProcess done = shell(sandbox, "true", "/tmp");
            assertThat(done.waitFor(Duration.ofSeconds(30))).hasValue(0);
            done.release();
          }
          // Five trees one after another: one cgroup, made once and kept between them.
          assertThat(treeCgroups(containerCgroup[0])).hasSize(1);

          SandboxProcess released = shell(sandbox, "true", "/tmp");
          assertThat(released.waitFor(Duration.ofSeconds(30))).hasValue(0);
          released.release();
          SandboxProcess next = shell(sandbox, "sleep 300", "/tmp");
          assertThat(treeCgroups(containerCgroup[0])).hasSize(1);
          released.terminateTree();
          released.killTree();
          SandboxProcess ps = shell(sandbox, "ps -eo args", "/tmp");
          String seen = text(ps);
          ps.release();
          assertThat(seen).contains("sleep 300");
          next.killTree();
          assertThat(next.waitFor(Duration.ofSeconds(30))).hasValue(137);
          next.release();
        });
    // The kept cgroups go with the container (an engine may finish its cleanup after the removal).
    await().untilAsserted(() -> assertThat(containerCgroup[0]).doesNotExist());
  }

  /** The cgroups of the process trees Box made in the container's cgroup {@code dir}. */
  private static List<Path> treeCgroups(Path dir) throws IOException {
    try (Stream<Path> children = Files.list(dir)) {
      return children
          .filter(p -> Files.isDirectory(p) && p.getFileName().toString().startsWith("box-exec-"))
          .toList();
    }
  }
}
