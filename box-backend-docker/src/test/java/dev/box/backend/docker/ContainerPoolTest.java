package dev.box.backend.docker;

import static dev.box.sandbox.SandboxTests.inSandbox;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.box.core.Hashes;
import dev.box.core.net.EgressPolicy;
import dev.box.sandbox.BackendRuntime;
import dev.box.sandbox.PooledBackendSuite;
import dev.box.sandbox.engine.EngineClient;
import dev.box.sandbox.engine.EnginePaths;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Pre-started Docker and Podman containers, against the real engines ({@code scripts/engines up}):
 * the {@linkplain PooledBackendSuite pool suite} every pooled backend passes (a workspace reaches a
 * running container through the slot's {@code rslave} propagation), and what is the engines' own: a
 * persistent session gets a container of its own, and waiting containers carry the pool label and
 * no session id. Skipped where an engine is not running.
 */
class ContainerPoolTest extends PooledBackendSuite {
  static List<PooledBackend> pooledBackends() {
    return List.of(pooled("docker"), pooled("podman"));
  }

  private static PooledBackend pooled(String engine) {
    return new PooledBackend(
        engine,
        (dir, size) -> backend(engine, dir, size),
        ContainerCreateBody.SANDBOX_UID,
        dir -> {
          try {
            return poolContainers(engine, dir).stream().map(c -> c.path("Id").asText()).toList();
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        });
  }

  private static ContainerBackend backend(String engine, Path dataDir, int poolSize) {
    return ContainerBackend.open(
        new ContainerSettings(
            engine,
            Path.of(ContainerBackendTest.socket(engine)),
            ContainerBackendTest.IMAGE,
            true,
            Duration.ofSeconds(120),
            null,
            ContainerSettings.DEFAULT_SANDBOX_LEASE,
            ContainerSettings.DEFAULT_WRITABLE_ROOT_MB,
            true,
            poolSize),
        dataDir,
        INSTANCE,
        EgressPolicy.DEFAULT,
        BackendRuntime.system());
  }

  private static ContainerBackend available(ContainerBackend backend) {
    if (!backend.status().available()) {
      backend.close();
    }
    assumeThat(backend.status().available()).as(backend.status().reason()).isTrue();
    return backend;
  }

  @ParameterizedTest
  @ValueSource(strings = {"docker", "podman"})
  void waitingContainers_carryThePoolLabel_andNoSessionId(String engine) throws Exception {
    try (ContainerBackend backend = available(backend(engine, dataDir, 2))) {
      awaitIdle(backend, 2);
      inSandbox(
          backend,
          pooledSpec("s1", hostDir("ws"), true, false),
          sandbox -> {
            assertThat(backend.pooledTakes()).isEqualTo(1);
            awaitIdle(backend, 2);
            assertThat(poolContainers(engine, dataDir))
                .as("pre-started containers carry the pool label and no session id")
                .hasSize(3)
                .allMatch(c -> c.path("Labels").path("langbot.session_id").isMissingNode());
          });
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"docker", "podman"})
  void aPersistentSession_getsAContainerOfItsOwn(String engine) throws Exception {
    try (ContainerBackend backend = available(backend(engine, dataDir, 1))) {
      awaitIdle(backend, 1);
      inSandbox(
          backend,
          pooledSpec("p", hostDir("ws"), true, true),
          sandbox -> {
            assertThat(sandbox.id()).doesNotContain("pool-");
            assertThat(run(sandbox, "echo ok > f; cat f")).isEqualTo("ok\nexit=0");
          });
      assertThat(backend.pooledTakes()).isZero();
      assertThat(backend.status().enforced().get("pool")).startsWith("1 of 1 ");
    }
  }

  /** The containers of {@code dataDir} with the pool label, running or not. */
  private static List<JsonNode> poolContainers(String engine, Path dataDir) throws IOException {
    String data = Hashes.shortSha256(dataDir.toAbsolutePath().normalize().toString());
    String filters =
        "{\"label\":[\""
            + ContainerCreateBody.POOL_LABEL
            + "=true\",\"dev.box.data="
            + data
            + "\"]}";
    try (EngineClient client =
        new EngineClient(Path.of(ContainerBackendTest.socket(engine)), BackendRuntime.system())) {
      EngineClient.Response listed =
          client.call("GET", EnginePaths.listContainers(filters), null, Duration.ofSeconds(30));
      List<JsonNode> found = new ArrayList<>();
      listed.json().forEach(found::add);
      return found;
    }
  }
}
