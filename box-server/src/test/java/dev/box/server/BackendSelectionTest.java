package dev.box.server;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * Backend selection through the real server: {@code local} takes the first available of Docker,
 * Podman and bubblewrap and says why it passed the others over; an explicit name never falls back.
 * Runs against the engines {@code scripts/engines up} starts; engines are made unreachable by
 * pointing their sockets at paths where nothing listens.
 */
class BackendSelectionTest {
  private static final String NO_DOCKER = "/nonexistent/docker.sock";
  private static final String NO_PODMAN = "/nonexistent/podman.sock";

  @Test
  void local_prefersDockerWhenItRuns() {
    try (TestServer box = TestServer.start("backend", "local")) {
      TestServer.Answer health = box.get("/v1/health");
      assertThat(health.text("name")).isEqualTo("docker");
      assertThat(health.body().path("available").asBoolean()).isTrue();
      assertThat(health.body().path("not_chosen").size()).isZero();
      assertThat(health.body().path("capabilities").toString()).contains("images");
    }
  }

  @Test
  void local_fallsBackToPodmanThenBubblewrapAndSaysWhy() {
    try (TestServer box = TestServer.start("backend", "local", "docker_host", NO_DOCKER)) {
      TestServer.Answer health = box.get("/v1/health");
      assertThat(health.text("name")).isEqualTo("podman");
      assertThat(health.body().path("not_chosen").path("docker").asText()).contains(NO_DOCKER);
    }
    try (TestServer box =
        TestServer.start(
            "backend", "local", "docker_host", NO_DOCKER, "podman_host", "unix://" + NO_PODMAN)) {
      TestServer.Answer health = box.get("/v1/health");
      assertThat(health.text("name")).isEqualTo("bwrap");
      assertThat(health.body().path("not_chosen").path("docker").asText()).contains(NO_DOCKER);
      assertThat(health.body().path("not_chosen").path("podman").asText()).contains(NO_PODMAN);
      assertThat(box.exec("fb", "echo ok").text("stdout")).isEqualTo("ok\n");
    }
  }

  @Test
  void anExplicitBackendNeverFallsBack() {
    try (TestServer box = TestServer.start("backend", "docker", "docker_host", NO_DOCKER)) {
      TestServer.Answer health = box.get("/v1/health");
      assertThat(health.text("name")).isEqualTo("docker");
      assertThat(health.body().path("available").asBoolean()).isFalse();
      assertThat(health.text("reason")).contains(NO_DOCKER).contains("start dockerd");

      TestServer.Answer exec = box.exec("nf", "echo ok");
      assertThat(exec.status()).isEqualTo(503);
      assertThat(exec.errorCode()).isEqualTo("backend_unavailable");
      assertThat(exec.errorMessage()).contains("docker");
    }
  }

  @Test
  void aSocketThatIsNotAUnixPathIsRefusedAtStart() {
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> TestServer.start("backend", "docker", "docker_host", "tcp://10.0.0.1:2375"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("docker_host must be a Unix socket");
  }
}
