package dev.box.backend.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.box.api.BoxEgress;
import dev.box.api.BoxNetworkMode;
import dev.box.api.BoxSpec;
import dev.box.core.Hashes;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxMount;
import dev.box.core.backend.SandboxProcess;
import dev.box.core.backend.SandboxSpec;
import dev.box.core.net.EgressPolicy;
import dev.box.sandbox.BackendRuntime;
import dev.box.sandbox.SandboxShape;
import dev.box.sandbox.WorkspaceSlots;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Pre-started Docker and Podman containers, against the real engines ({@code scripts/engines up}):
 * a non-persistent session of the pooled shape takes one and finds its own workspace in it through
 * the slot's {@code rslave} propagation; another shape, or a persistent session, gets a container
 * of its own; closing the backend leaves no pooled container and no slot mount; a pool of size 0 is
 * no pool.
 */
class ContainerPoolTest {
  @TempDir Path dataDir;
  @TempDir Path hostDirs;

  private ContainerBackend backend(String engine, int poolSize) {
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
        "inst",
        EgressPolicy.DEFAULT,
        BackendRuntime.system());
  }

  /** A spec of the pooled shape (the default image) whose workspace is {@code host}. */
  private static SandboxSpec spec(String session, Path host, int memoryMb, boolean persistent) {
    SandboxShape shape = SandboxShape.pooled();
    return new SandboxSpec(
        session,
        "inst_" + session,
        "inst",
        BoxSpec.DEFAULT_IMAGE,
        BoxNetworkMode.OFF,
        new SandboxMount(host, "/workspace", false, true),
        List.of(),
        shape.readOnlyRootfs(),
        shape.cpus(),
        memoryMb,
        shape.pidsLimit(),
        BoxEgress.NONE,
        persistent);
  }

  private Path hostDir(String name) throws IOException {
    return Files.createDirectories(hostDirs.resolve(name)).toRealPath();
  }

  private static void awaitIdle(ContainerBackend backend, int idle) {
    await().atMost(Duration.ofSeconds(60)).until(() -> pool(backend).startsWith(idle + " of "));
  }

  private static String pool(ContainerBackend backend) {
    return backend.status().enforced().getOrDefault("pool", "");
  }

  private static String run(Sandbox sandbox, String script) throws IOException {
    SandboxProcess p =
        ContainerBackendTest.shell(sandbox, "{ " + script + "\n} 2>&1", "/workspace");
    try {
      return ContainerBackendTest.text(p);
    } finally {
      p.release();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"docker", "podman"})
  void aSessionOfThePooledShape_takesAPreStartedContainer_withItsWorkspaceBound(String engine)
      throws Exception {
    Path host = hostDir("ws");
    Files.writeString(host.resolve("given"), "from the host\n");
    int memory = SandboxShape.pooled().memoryMb();
    try (ContainerBackend backend = backend(engine, 2)) {
      awaitIdle(backend, 2);
      Sandbox sandbox = backend.start(spec("s1", host, memory, false));
      try {
        assertThat(sandbox.id()).contains("inst_pool-");
        assertThat(backend.pooledTakes()).isEqualTo(1);
        assertThat(run(sandbox, "cat given; echo made > made; pwd; id -u"))
            .isEqualTo("from the host\n/workspace\n1000\n");
        assertThat(Files.readString(host.resolve("made"))).isEqualTo("made\n");
        awaitIdle(backend, 2);
        assertThat(poolContainers(engine))
            .as("pre-started containers carry the pool label and no session id")
            .hasSize(3)
            .allMatch(c -> c.path("Labels").path("langbot.session_id").isMissingNode());
      } finally {
        sandbox.destroy();
      }
      assertThat(host.resolve("made")).as("the workspace outlives its container").exists();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"docker", "podman"})
  void anotherShape_orAPersistentSession_getsAContainerOfItsOwn(String engine) throws Exception {
    Path host = hostDir("ws");
    int memory = SandboxShape.pooled().memoryMb();
    try (ContainerBackend backend = backend(engine, 1)) {
      awaitIdle(backend, 1);
      for (SandboxSpec spec :
          List.of(spec("m", host, memory - 1, false), spec("p", host, memory, true))) {
        Sandbox sandbox = backend.start(spec);
        try {
          assertThat(sandbox.id()).as(spec.toString()).doesNotContain("pool-");
          assertThat(run(sandbox, "echo ok > f; cat f")).isEqualTo("ok\n");
        } finally {
          sandbox.destroy();
        }
      }
      assertThat(backend.pooledTakes()).isZero();
      assertThat(pool(backend)).startsWith("1 of 1 ");
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"docker", "podman"})
  void closingTheBackend_leavesNoPooledContainer_andNoSlotMount(String engine) throws Exception {
    ContainerBackend backend = backend(engine, 2);
    try {
      awaitIdle(backend, 2);
      Sandbox taken =
          backend.start(spec("s1", hostDir("ws"), SandboxShape.pooled().memoryMb(), false));
      awaitIdle(backend, 2);
      assertThat(slotMounts(engine)).isNotEmpty();
      taken.destroy();
    } finally {
      backend.close();
    }
    assertThat(poolContainers(engine)).isEmpty();
    assertThat(WorkspaceSlots.mountPointsUnder(dataDir.resolve(engine + "-pool"))).isEmpty();
    assertThat(dataDir.resolve(engine + "-pool").resolve("inst")).doesNotExist();
  }

  @ParameterizedTest
  @ValueSource(strings = {"docker", "podman"})
  void poolSizeZero_createsEveryContainerFresh_asBefore(String engine) throws Exception {
    try (ContainerBackend backend = backend(engine, 0)) {
      assertThat(pool(backend)).startsWith("none");
      Sandbox sandbox =
          backend.start(spec("s1", hostDir("ws"), SandboxShape.pooled().memoryMb(), false));
      try {
        assertThat(sandbox.id()).startsWith("langbot-box-s1-");
        assertThat(run(sandbox, "echo ok > f; cat f")).isEqualTo("ok\n");
      } finally {
        sandbox.destroy();
      }
      assertThat(poolContainers(engine)).isEmpty();
      assertThat(dataDir.resolve(engine + "-pool")).doesNotExist();
    }
  }

  /** The containers of this data directory with the pool label, running or not. */
  private List<JsonNode> poolContainers(String engine) throws IOException {
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
          client.call(
              "GET",
              "/containers/json?all=1&filters="
                  + URLEncoder.encode(filters, StandardCharsets.UTF_8),
              null,
              Duration.ofSeconds(30));
      List<JsonNode> found = new ArrayList<>();
      listed.json().forEach(found::add);
      return found;
    }
  }

  private List<Path> slotMounts(String engine) {
    return WorkspaceSlots.mountPointsUnder(dataDir.resolve(engine + "-pool")).stream()
        .filter(p -> p.getNameCount() > dataDir.getNameCount() + 3)
        .toList();
  }
}
