package dev.box.server;

import static dev.box.server.ErrorAnswers.assertError;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.BoxNetworkMode;
import dev.box.backend.docker.ContainerBackend;
import dev.box.backend.docker.ContainerSettings;
import dev.box.core.backend.BackendChoice;
import dev.box.core.backend.Foreground;
import dev.box.core.backend.SandboxSpec;
import dev.box.core.net.EgressPolicy;
import dev.box.sandbox.BackendRuntime;
import dev.box.testclient.Answer;
import dev.box.testclient.OptionalPiece;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Backend selection through the real server: {@code local} takes the first available of Docker,
 * Podman, bubblewrap and nsjail and says why it passed the others over; an explicit name never
 * falls back. Runs against the engines {@code scripts/engines up} starts; engines are made
 * unreachable by pointing their sockets at paths where nothing listens.
 */
class BackendSelectionTest {
  private static final String NO_DOCKER = "/nonexistent/docker.sock";
  private static final String NO_PODMAN = "/nonexistent/podman.sock";

  @Test
  void local_prefersDockerWhenItRuns() {
    try (TestServer box = TestServer.start("backend", "local")) {
      Answer health = box.get("/v1/health");
      assertThat(health.text("name")).isEqualTo("docker");
      assertThat(health.body().path("available").asBoolean()).isTrue();
      assertThat(health.body().path("not_chosen").size()).isZero();
      assertThat(health.body().path("capabilities").toString()).contains("images");
    }
  }

  @Test
  void local_neverFallsThroughToE2b_evenWithAnE2bKeyInTheEnvironment(@TempDir Path dataDir) {
    // A key exported for E2B's SDKs talking to this very server must not make Box its own backend.
    ServerConfig config =
        ServerConfig.resolve(
            java.util.Map.of("backend", "local", "data_dir", dataDir.toString()),
            java.util.Map.of(
                "E2B_API_KEY", "for-the-sdk", "E2B_API_URL", "http://127.0.0.1:5410/e2b"));
    BackendChoice choice = Backends.open("local", config, "e2bkey", new Foreground());
    try {
      assertThat(choice.why()).doesNotContain("e2b");
      assertThat(choice.backend().name()).isNotEqualTo("e2b");
    } finally {
      choice.backend().close();
    }
  }

  @Test
  void local_fallsBackToPodmanThenBubblewrapAndSaysWhy() {
    try (TestServer box = TestServer.start("backend", "local", "docker_host", NO_DOCKER)) {
      Answer health = box.get("/v1/health");
      assertThat(health.text("name")).isEqualTo("podman");
      assertThat(health.body().path("not_chosen").path("docker").asText()).contains(NO_DOCKER);
    }
    try (TestServer box =
        TestServer.start(
            "backend", "local", "docker_host", NO_DOCKER, "podman_host", "unix://" + NO_PODMAN)) {
      Answer health = box.get("/v1/health");
      assertThat(health.text("name")).isEqualTo("bwrap");
      // Passed over without opening their backends, for the reason their probe would give.
      assertThat(health.body().path("not_chosen").path("docker").asText())
          .isEqualTo(
              "no Docker Engine API socket at "
                  + NO_DOCKER
                  + " (start dockerd, or set docker_host)");
      assertThat(health.body().path("not_chosen").path("podman").asText())
          .isEqualTo(
              "no Podman API socket at "
                  + NO_PODMAN
                  + " (start it with: podman system service --time=0 unix://"
                  + NO_PODMAN
                  + ")");
      assertThat(box.exec("fb", "echo ok").text("stdout")).isEqualTo("ok\n");
    }
  }

  @Test
  void anExplicitBackendNeverFallsBack() {
    try (TestServer box = TestServer.start("backend", "docker", "docker_host", NO_DOCKER)) {
      Answer health = box.get("/v1/health");
      assertThat(health.text("name")).isEqualTo("docker");
      assertThat(health.body().path("available").asBoolean()).isFalse();
      assertThat(health.text("reason")).contains(NO_DOCKER).contains("start dockerd");

      assertError(box.exec("nf", "echo ok"), 503, "backend_unavailable").contains("docker");
    }
  }

  @Test
  void nsjail_byName_runsSessionsInJails() {
    OptionalPiece.assumeNsjail();
    try (TestServer box = TestServer.start("backend", "nsjail")) {
      Answer health = box.get("/v1/health");
      assertThat(health.text("name")).isEqualTo("nsjail");
      assertThat(health.body().path("available").asBoolean()).as(health.text("reason")).isTrue();
      assertThat(health.body().path("enforced").path("nsjail_time_limit").asText())
          .startsWith("off");
      assertThat(box.exec("nj", "id -u; cat /proc/1/cmdline | tr '\\0' ' '").text("stdout"))
          .isEqualTo("1000\n/.box/box-agent /.box/agent/socket ");
    }
  }

  @Test
  void nsjail_missingAtTheConfiguredPath_isUnavailableAndSaysWhere() {
    try (TestServer box =
        TestServer.start("backend", "nsjail", "nsjail_path", "/nonexistent/nsjail")) {
      Answer health = box.get("/v1/health");
      assertThat(health.body().path("available").asBoolean()).isFalse();
      assertThat(health.text("reason"))
          .isEqualTo("nsjail not found at /nonexistent/nsjail (nsjail_path)");
      assertError(box.exec("nf", "echo ok"), 503, "backend_unavailable");
    }
  }

  @Test
  void aSocketThatIsNotAUnixPathIsRefusedAtStart() {
    assertThatThrownBy(
            () -> TestServer.start("backend", "docker", "docker_host", "tcp://10.0.0.1:2375"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("docker_host must be a Unix socket");
  }

  @Test
  void whenNoCandidateIsAvailable_sessionRequestsGetLangBotsMessageAndEachReason(
      @TempDir Path dataDir) {
    // Real container backends pointed at sockets where nothing listens: none is available.
    BackendChoice selection =
        Backends.firstAvailable(
            List.of("docker", "podman"),
            name ->
                ContainerBackend.open(
                    new ContainerSettings(
                        name,
                        Path.of("/nonexistent/" + name + ".sock"),
                        null,
                        true,
                        Duration.ofSeconds(1)),
                    dataDir,
                    "inst",
                    EgressPolicy.DEFAULT,
                    BackendRuntime.system()));

    assertThat(selection.backend().status().available()).isFalse();
    assertThat(selection.notChosen()).containsOnlyKeys("docker", "podman");
    assertThat(selection.backend().status().reason())
        .startsWith(
            "LangBot Box backend unavailable. Install and start Docker or nsjail before using"
                + " exec.")
        .contains("/nonexistent/docker.sock")
        .contains("/nonexistent/podman.sock");
    assertThatThrownBy(
            () ->
                selection
                    .backend()
                    .start(
                        new SandboxSpec(
                            "s",
                            "s",
                            "inst",
                            "image",
                            BoxNetworkMode.OFF,
                            null,
                            List.of(),
                            false,
                            1,
                            256,
                            64,
                            dev.box.api.BoxEgress.NONE,
                            false,
                            null)))
        .isInstanceOfSatisfying(
            BoxException.class,
            e -> assertThat(e.code()).isEqualTo(BoxErrorCode.BACKEND_UNAVAILABLE));
  }
}
