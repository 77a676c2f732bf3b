package dev.box.backend.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.box.api.BoxEgress;
import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.BoxNetworkMode;
import dev.box.core.backend.ProcessSpec;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxMount;
import dev.box.core.backend.SandboxProcess;
import dev.box.core.backend.SandboxSpec;
import dev.box.core.net.EgressPolicy;
import dev.box.guard.SyscallGuard;
import dev.box.sandbox.BackendRuntime;
import dev.box.sandbox.IdmappedMounts;
import dev.box.sandbox.SandboxTests;
import dev.box.sandbox.engine.EngineClient;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The container backend against the real Docker and Podman engines of this machine ({@code
 * scripts/engines up} starts them and imports the test image): the backend's own mechanics below
 * the server. The behaviour users see is checked by the conformance suite in box-testkit.
 */
class ContainerBackendTest {
  static final String IMAGE = System.getenv().getOrDefault("BOX_TEST_IMAGE", "box-debian:bookworm");

  @TempDir Path dataDir;

  static String socket(String engine) {
    return engine.equals("docker")
        ? System.getenv().getOrDefault("DOCKER_SOCKET", "/var/run/docker.sock")
        : System.getenv().getOrDefault("PODMAN_SOCKET", "/run/podman/podman.sock");
  }

  static ContainerBackend open(String engine, Path dataDir, String instance, Duration pull) {
    return ContainerBackend.open(
        new ContainerSettings(engine, Path.of(socket(engine)), null, true, pull),
        dataDir,
        instance,
        EgressPolicy.DEFAULT,
        BackendRuntime.system());
  }

  static SandboxSpec spec(String session, String image) {
    return spec(session, image, null, false);
  }

  /** A network-off spec of 256 MiB, 64 pids and one CPU, with {@code mount} and the root asked. */
  static SandboxSpec spec(
      String session, String image, @Nullable SandboxMount mount, boolean readOnlyRoot) {
    return new SandboxSpec(
        session,
        "x",
        "inst",
        image,
        BoxNetworkMode.OFF,
        mount,
        List.of(),
        readOnlyRoot,
        1.0,
        256,
        64,
        BoxEgress.NONE,
        false,
        null);
  }

  static String text(SandboxProcess p) throws IOException {
    return new String(p.stdout().readAllBytes(), StandardCharsets.UTF_8);
  }

  /** Starts {@code script} in {@code workdir} of {@code sandbox}, without stdin. */
  static SandboxProcess shell(Sandbox sandbox, String script, String workdir) {
    return sandbox.spawn(new ProcessSpec(new ProcessSpec.Shell(script), workdir, Map.of(), false));
  }

  /** Runs {@code script} in /tmp of {@code sandbox} and returns its stdout and stderr. */
  static String run(Sandbox sandbox, String script) throws IOException {
    SandboxProcess p = shell(sandbox, "{ " + script + "\n} 2>&1", "/tmp");
    try {
      return text(p);
    } finally {
      p.release();
    }
  }

  /** Runs {@code body} in a sandbox of {@code spec} on a backend of {@code engine} of its own. */
  void inSandbox(String engine, SandboxSpec spec, SandboxTests.Body body) throws Exception {
    inSandbox(engine, dataDir, spec, body);
  }

  /**
   * Runs {@code body} in a sandbox of {@code spec} on a backend of {@code engine} of its own, on
   * {@code dataDir} as instance {@code inst}.
   */
  static void inSandbox(String engine, Path dataDir, SandboxSpec spec, SandboxTests.Body body)
      throws Exception {
    try (ContainerBackend backend = open(engine, dataDir, "inst", Duration.ofSeconds(30))) {
      SandboxTests.inSandbox(backend, spec, body);
    }
  }

  /** The seccomp lines of /proc/PID/status for the exec itself and for PID 1. */
  private static final String SECCOMP_OF_SELF_AND_PID_1 =
      "grep -h '^Seccomp' /proc/self/status; grep -h '^Seccomp' /proc/1/status;"
          + " tr '\\000' ' ' < /proc/1/cmdline";

  @ParameterizedTest
  @ValueSource(strings = {"docker", "podman"})
  void aContainer_outlivesItsLeaseWhileTheServerBeats_andEndsOnceTheBeatsStop(String engine)
      throws Exception {
    try (ContainerBackend backend =
        ContainerBackend.open(
            new ContainerSettings(
                engine,
                Path.of(socket(engine)),
                null,
                true,
                Duration.ofMinutes(5),
                null,
                Duration.ofSeconds(3),
                ContainerSettings.DEFAULT_WRITABLE_ROOT_MB,
                true,
                0),
            dataDir,
            "lease",
            EgressPolicy.DEFAULT,
            BackendRuntime.system())) {
      SandboxTests.inSandbox(
          backend,
          spec("lease", IMAGE),
          sandbox -> {
            // Twice the lease with the server beating: the container stays.
            Thread.sleep(6_000);
            assertThat(sandbox.isAlive()).isTrue();

            backend.stopLease();

            await()
                .atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(500))
                .until(() -> !sandbox.isAlive());
          });
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"docker", "podman"})
  void everyProcess_pid1Included_runsUnderBoxFilterAndTheEngines(String engine) throws Exception {
    try (ContainerBackend backend = open(engine, dataDir, "inst", Duration.ofSeconds(30))) {
      assertThat(backend.status().enforced())
          .containsEntry("seccomp", SyscallGuard.POLICY)
          .containsKey("writable_root");
      SandboxTests.inSandbox(
          backend,
          spec("guarded", IMAGE),
          sandbox -> {
            String seen = run(sandbox, SECCOMP_OF_SELF_AND_PID_1);

            // Two filters each: the engine's profile and box-guard's.
            assertThat(seen)
                .startsWith("Seccomp:\t2\nSeccomp_filters:\t2\nSeccomp:\t2\nSeccomp_filters:\t2\n")
                .contains("/.box/box-guard --init -- /bin/sh -c ")
                .contains(" box-lease " + SandboxLease.SANDBOX_PATH + " ")
                .endsWith(" /.box/box-agent /.box/agent/socket ");
            assertThat(run(sandbox, "unshare -U true; echo $?")).endsWith("1\n");
            // The engine execs nothing of the image's own (a HEALTHCHECK would run unfiltered).
            EngineClient.Response inspect =
                new EngineClient(Path.of(socket(engine)), BackendRuntime.system())
                    .call(
                        "GET",
                        "/containers/" + sandbox.id() + "/json",
                        null,
                        Duration.ofSeconds(10));
            assertThat(inspect.json().path("Config").path("Healthcheck").path("Test").toString())
                .isEqualTo("[\"NONE\"]");
            assertThat(
                    run(
                        sandbox,
                        "echo x > /.box/box-guard || echo write-refused;"
                            + " rm -f /.box/box-guard || echo rm-refused;"
                            + " mv /.box /tmp/moved || echo mv-refused;"
                            + " /.box/box-guard --policy"))
                .contains("write-refused", "rm-refused", "mv-refused")
                .endsWith("\n" + SyscallGuard.POLICY + "\n");
          });
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"docker", "podman"})
  void withoutTheGuard_sessionsStillStart_andHealthSaysTheEngineFilters(String engine)
      throws Exception {
    String socket = socket(engine);
    try (ContainerBackend backend =
        ContainerBackend.open(
            new ContainerSettings(engine, Path.of(socket), null, true, Duration.ofSeconds(30)),
            dataDir,
            "inst",
            EgressPolicy.DEFAULT,
            SyscallGuard.unavailable("no box-guard binary for this arch"),
            BackendRuntime.system())) {
      assertThat(backend.status().enforced()).containsEntry("seccomp", "engine-default");
      assertThat(backend.status().enforced().get(IdmappedMounts.HEALTH_KEY))
          .as("nothing would keep set-id bits off an idmapped folder's files")
          .startsWith("false: no box-guard filter");
      SandboxTests.inSandbox(
          backend,
          spec("unguarded", IMAGE),
          sandbox -> {
            String seen = run(sandbox, SECCOMP_OF_SELF_AND_PID_1);

            assertThat(seen).startsWith("Seccomp:\t2\nSeccomp_filters:\t1\n");
            assertThat(seen).doesNotContain("box-guard");
          });
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"docker", "podman"})
  void anOperatorsSeccompProfile_isAppliedByTheEngine_underBoxFilter(String engine)
      throws Exception {
    Path profile = dataDir.resolve("no-mkdir.json");
    Files.writeString(
        profile,
        """
        {"defaultAction": "SCMP_ACT_ALLOW",
         "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 13}]}
        """);
    String socket = socket(engine);
    try (ContainerBackend backend =
        ContainerBackend.open(
            new ContainerSettings(
                engine,
                Path.of(socket),
                null,
                true,
                Duration.ofSeconds(30),
                profile,
                ContainerSettings.DEFAULT_SANDBOX_LEASE,
                ContainerSettings.DEFAULT_WRITABLE_ROOT_MB,
                true,
                0),
            dataDir,
            "inst",
            EgressPolicy.DEFAULT,
            BackendRuntime.system())) {
      assertThat(backend.status().available()).as(backend.status().reason()).isTrue();
      assertThat(backend.status().enforced()).containsEntry("seccomp", SyscallGuard.POLICY);
      SandboxTests.inSandbox(
          backend,
          spec("profiled", IMAGE),
          sandbox -> {
            assertThat(run(sandbox, "mkdir /tmp/d")).contains("Permission denied");
            assertThat(run(sandbox, "unshare -U true; echo $?")).endsWith("1\n");
          });
    }
  }

  @Test
  void aSeccompProfileThatIsNotAProfile_isRefusedWithTheReason() throws IOException {
    Path list = Files.writeString(dataDir.resolve("list.json"), "[]");
    Path noAction = Files.writeString(dataDir.resolve("empty.json"), "{}");

    assertThatThrownBy(() -> ContainerSettings.checkSeccompProfile(dataDir.resolve("none.json")))
        .hasMessageStartingWith("cannot read seccomp_profile " + dataDir.resolve("none.json"));
    assertThatThrownBy(() -> ContainerSettings.checkSeccompProfile(list))
        .hasMessage("seccomp_profile " + list + " is not a JSON object");
    assertThatThrownBy(() -> ContainerSettings.checkSeccompProfile(noAction))
        .hasMessageContaining("has no defaultAction");
  }

  @ParameterizedTest
  @ValueSource(strings = {"docker", "podman"})
  void execSeparatesStreamsAndReportsTheExitCode(String engine) throws Exception {
    try (ContainerBackend backend = open(engine, dataDir, "inst", Duration.ofSeconds(30))) {
      assertThat(backend.status().available()).as(backend.status().reason()).isTrue();
      Sandbox sandbox = backend.start(spec("s1", IMAGE));
      try {
        SandboxProcess p = shell(sandbox, "echo out; echo err >&2; id -u; exit 3", "/tmp/w");
        String err = new String(p.stderr().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(text(p)).isEqualTo("out\n1000\n");
        assertThat(err).isEqualTo("err\n");
        assertThat(p.waitFor(Duration.ofSeconds(10))).isEqualTo(OptionalInt.of(3));
        p.release();
      } finally {
        sandbox.destroy();
      }
      assertThat(sandbox.isAlive()).isFalse();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"docker", "podman"})
  void stdinIsRelayedAndItsCloseIsEndOfFile(String engine) throws Exception {
    inSandbox(
        engine,
        spec("s2", IMAGE),
        sandbox -> {
          SandboxProcess p =
              sandbox.spawn(
                  new ProcessSpec(new ProcessSpec.Argv(List.of("cat")), "/tmp", Map.of(), true));
          try (OutputStream in = p.stdin()) {
            in.write("hello\nworld\n".getBytes(StandardCharsets.UTF_8));
          }
          assertThat(text(p)).isEqualTo("hello\nworld\n");
          assertThat(p.waitFor(Duration.ofSeconds(10))).isEqualTo(OptionalInt.of(0));
          p.release();
        });
  }

  @ParameterizedTest
  @ValueSource(strings = {"docker", "podman"})
  void killTreeKillsDaemonisedDescendantsAndTheContainerSurvives(String engine) throws Exception {
    inSandbox(
        engine,
        spec("s3", IMAGE),
        sandbox -> {
          SandboxProcess p =
              shell(
                  sandbox,
                  "(setsid sh -c 'sleep 98761' &); nohup sleep 98762 >/dev/null 2>&1 &"
                      + " env -i /bin/sleep 98763 & sleep 98764",
                  "/tmp");
          assertThat(p.waitFor(Duration.ofMillis(800))).isEmpty();
          p.killTree();
          assertThat(p.waitFor(Duration.ofSeconds(5))).isPresent();
          p.release();
          SandboxProcess ps = shell(sandbox, "ps -eo args | grep -c '^sleep 9876' || true", "/tmp");
          assertThat(text(ps).strip()).isEqualTo("0");
          ps.release();
          assertThat(sandbox.isAlive()).isTrue();
        });
  }

  @ParameterizedTest
  @ValueSource(strings = {"docker", "podman"})
  void aReadOnlyRootHasA64MibTmp(String engine) throws Exception {
    SandboxSpec spec = spec("ro", IMAGE, null, true);
    inSandbox(
        engine,
        spec,
        sandbox -> {
          SandboxProcess p =
              shell(
                  sandbox,
                  "touch /opt/x 2>&1 | grep -c Read-only;"
                      + " head -c 80000000 /dev/zero > /tmp/big 2>/dev/null;"
                      + " echo $(( $(stat -c %s /tmp/big) / 1048576 ))",
                  "/tmp");
          assertThat(text(p)).isEqualTo("1\n64\n");
          p.release();
        });
  }

  @ParameterizedTest
  @ValueSource(strings = {"docker", "podman"})
  void aHostPathWithColonsIsMountedAsOnePath(String engine) throws Exception {
    Path host = Files.createDirectories(dataDir.resolve("work:/etc:rw"));
    Files.setPosixFilePermissions(host, PosixFilePermissions.fromString("rwxrwxrwx"));
    SandboxSpec spec = spec("colon", IMAGE, new SandboxMount(host, "/workspace", false), false);
    inSandbox(
        engine,
        spec,
        sandbox -> {
          SandboxProcess p =
              shell(sandbox, "echo hi > /workspace/f && ls -ld /etc | cut -c1-10", "/workspace");
          assertThat(text(p)).isEqualTo("drwxr-xr-x\n");
          assertThat(p.waitFor(Duration.ofSeconds(10))).isEqualTo(OptionalInt.of(0));
          p.release();
          assertThat(Files.readString(host.resolve("f"))).isEqualTo("hi\n");
        });
  }

  @ParameterizedTest
  @ValueSource(strings = {"docker", "podman"})
  void aMissingImageThatCannotBePulledIsAClearErrorAndLeavesNoContainer(String engine) {
    try (ContainerBackend backend = open(engine, dataDir, "inst", Duration.ofSeconds(20))) {
      assertThatThrownBy(() -> backend.start(spec("s4", "box-no-such-image:1")))
          .isInstanceOfSatisfying(
              BoxException.class,
              e -> assertThat(e.code()).isEqualTo(BoxErrorCode.BACKEND_UNAVAILABLE))
          .hasMessageContaining("image box-no-such-image:1 is not present");
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"docker", "podman"})
  void orphanCleanupRemovesOnlyEarlierInstancesOfTheSameDataDir(String engine) throws Exception {
    Path otherData = Files.createDirectories(dataDir.resolve("other"));
    try (ContainerBackend old = open(engine, dataDir, "old", Duration.ofSeconds(30));
        ContainerBackend other = open(engine, otherData, "other", Duration.ofSeconds(30));
        ContainerBackend current = open(engine, dataDir, "new", Duration.ofSeconds(30))) {
      Sandbox orphan = old.start(spec("o1", IMAGE));
      Sandbox foreign = other.start(spec("o2", IMAGE));
      Sandbox mine = current.start(spec("o3", IMAGE));
      try {
        current.removeOrphans();
        assertThat(orphan.isAlive()).isFalse();
        assertThat(foreign.isAlive()).isTrue();
        assertThat(mine.isAlive()).isTrue();
      } finally {
        orphan.destroy();
        foreign.destroy();
        mine.destroy();
      }
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"docker", "podman"})
  void anUnreachableEngineIsReportedUnavailableWithAHint(String engine) {
    ContainerBackend backend =
        ContainerBackend.open(
            new ContainerSettings(
                engine, dataDir.resolve("no.sock"), null, true, Duration.ofSeconds(1)),
            dataDir,
            "inst",
            EgressPolicy.DEFAULT,
            BackendRuntime.system());
    assertThat(backend.status().available()).isFalse();
    assertThat(backend.status().reason()).contains("no.sock");
    assertThatThrownBy(() -> backend.start(spec("s5", IMAGE)))
        .isInstanceOfSatisfying(
            BoxException.class,
            e -> assertThat(e.code()).isEqualTo(BoxErrorCode.BACKEND_UNAVAILABLE));
  }

  /**
   * A pull that does not finish in time fails the session and creates no container. No registry is
   * reachable here, and a real pull from an unreachable registry fails at once instead of hanging,
   * so this one test speaks to a fake engine ({@link FakeEngine}) that knows no image and never
   * answers a pull.
   */
  @Test
  void aPullThatTimesOutIsAnErrorAndNoContainerIsCreated() throws Exception {
    try (FakeEngine engine = FakeEngine.start(dataDir.resolve("fake-engine.sock"))) {
      ContainerBackend backend =
          ContainerBackend.open(
              new ContainerSettings("docker", engine.socket(), null, true, Duration.ofSeconds(1)),
              dataDir,
              "inst",
              EgressPolicy.DEFAULT,
              BackendRuntime.system());
      assertThat(backend.status().available()).as(backend.status().reason()).isTrue();

      assertThatThrownBy(() -> backend.start(spec("slow", "slow/image:1")))
          .isInstanceOfSatisfying(
              BoxException.class,
              e -> assertThat(e.code()).isEqualTo(BoxErrorCode.BACKEND_UNAVAILABLE))
          .hasMessage("image slow/image:1 is not present and pulling it timed out after 1 s");
      assertThat(engine.requests("/images/create")).isEqualTo(1);
      assertThat(engine.requests("/containers/create")).as("no create after the pull").isEqualTo(1);
      assertThat(engine.requests("/start")).isZero();
    }
  }

  /** An engine that goes away after the start is unavailable (503), not an internal error. */
  @Test
  void anEngineThatWentAwayMakesSessionsUnavailableNotInternalErrors() throws Exception {
    ContainerBackend backend;
    try (FakeEngine engine = FakeEngine.start(dataDir.resolve("gone.sock"))) {
      backend =
          ContainerBackend.open(
              new ContainerSettings("docker", engine.socket(), null, true, Duration.ofSeconds(1)),
              dataDir,
              "inst",
              EgressPolicy.DEFAULT,
              BackendRuntime.system());
      assertThat(backend.status().available()).isTrue();
    }

    assertThatThrownBy(() -> backend.start(spec("gone", IMAGE)))
        .isInstanceOfSatisfying(
            BoxException.class,
            e -> assertThat(e.code()).isEqualTo(BoxErrorCode.BACKEND_UNAVAILABLE))
        .hasMessageContaining("docker backend is unavailable: cannot reach Docker Engine");
    assertThat(backend.status().available()).isFalse();
  }
}
