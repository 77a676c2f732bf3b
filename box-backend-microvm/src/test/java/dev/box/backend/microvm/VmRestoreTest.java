package dev.box.backend.microvm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.box.api.BoxNetworkMode;
import dev.box.core.backend.PoolLevel;
import dev.box.core.backend.ProcessSpec;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxProcess;
import dev.box.core.backend.SandboxSpec;
import dev.box.core.net.EgressPolicy;
import dev.box.sandbox.BackendRuntime;
import dev.box.sandbox.SandboxShape;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The pool's VMs restored from a saved template with real QEMU: the first server boots the template
 * once and saves it, a second server on the same state directory restores its whole pool from the
 * file without booting (its health report counts them), and each restored VM runs commands, has
 * random state of its own and the host's time. Needs what {@code scripts/microvm} prepares for the
 * VM tests; without it they are skipped. The key's tests need no VM.
 */
class VmRestoreTest {
  private static final Duration BOOTS = Duration.ofMinutes(4);

  /** How far the guest's clock may be from the host's: an exec's round trip under TCG. */
  private static final Duration CLOCK_SLACK = Duration.ofSeconds(2);

  @Test
  void aSecondServerRestoresItsPool_eachVmWithItsOwnRandomStateAndTheHostsTime(@TempDir Path state)
      throws Exception {
    Path files = MicrovmFiles.dir(System.getenv("BOX_MICROVM_CACHE"));
    assumeTrue(
        Files.isRegularFile(files.resolve(MicrovmFiles.MANIFEST)),
        "no micro-VM files in " + files + ": run scripts/microvm");
    try (MicrovmBackend first = backend(state, files, 1)) {
      await().atMost(BOOTS).until(() -> first.poolLevel().equals(new PoolLevel(1, 1)));
      assertThat(first.status().enforced().get("vm_state"))
          .contains("saved by this server")
          .contains("1 VMs restored, 1 templates booted since the server started");
      Sandbox sandbox = first.start(pooledSpec("s1"));
      assertThat(run(sandbox, "echo restored; id -u"))
          .isEqualTo("restored\n" + MicrovmBackendTest.SANDBOX_UID + "\n");
      sandbox.destroy();
    }

    try (MicrovmBackend second = backend(state, files, 2)) {
      await().atMost(BOOTS).until(() -> second.poolLevel().equals(new PoolLevel(2, 2)));
      assertThat(second.status().enforced().get("vm_state"))
          .contains("found at start")
          .contains("2 VMs restored, 0 templates booted since the server started");
      Sandbox a = second.start(pooledSpec("a"));
      Sandbox b = second.start(pooledSpec("b"));
      String script =
          "cat /proc/sys/kernel/random/uuid; head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \\n';"
              + " echo; date +%s%N";
      Instant before = Instant.now();
      List<String> fromA = run(a, script).lines().toList();
      List<String> fromB = run(b, script).lines().toList();
      Instant after = Instant.now();

      assertThat(fromA).hasSize(3);
      assertThat(fromB).hasSize(3);
      assertThat(fromA.get(0)).isNotEqualTo(fromB.get(0));
      assertThat(fromA.get(1)).hasSize(64).isNotEqualTo(fromB.get(1));
      for (List<String> out : List.of(fromA, fromB)) {
        Instant guest = Instant.EPOCH.plusNanos(Long.parseLong(out.get(2)));
        assertThat(guest).isBetween(before.minus(CLOCK_SLACK), after.plus(CLOCK_SLACK));
      }
      // Only a template's init waits for a go, and says so when it comes.
      Path vm = state.resolve("microvm/vms").resolve(a.id());
      assertThat(Files.readString(vm.resolve("console.log"))).contains("box-vminit: go");
      // Once the go is sent, nothing can reach the VM's QMP or go port by a path.
      assertThat(vm.resolve("sockets")).isEmptyDirectory();
      a.destroy();
      b.destroy();
    }
  }

  @Test
  void aSessionWithoutAPool_restoresToo_andAStateThatDoesNotRestore_isDiscardedForABoot(
      @TempDir Path state) throws Exception {
    Path files = MicrovmFiles.dir(System.getenv("BOX_MICROVM_CACHE"));
    assumeTrue(
        Files.isRegularFile(files.resolve(MicrovmFiles.MANIFEST)),
        "no micro-VM files in " + files + ": run scripts/microvm");
    Path saved;
    try (MicrovmBackend first = backend(state, files, 0)) {
      Sandbox sandbox = first.start(pooledSpec("s1"));
      assertThat(first.status().enforced().get("vm_state"))
          .contains("1 VMs restored, 1 templates booted since the server started");
      assertThat(run(sandbox, "echo restored")).isEqualTo("restored\n");
      sandbox.destroy();
      try (Stream<Path> kept = Files.list(state.resolve("microvm/saved"))) {
        saved = kept.findFirst().orElseThrow();
      }
    }
    // The right name, a stream cut in half: QEMU refuses it and exits.
    try (var file = FileChannel.open(saved, StandardOpenOption.WRITE)) {
      file.truncate(file.size() / 2);
    }

    try (MicrovmBackend second = backend(state, files, 0)) {
      Sandbox sandbox = second.start(pooledSpec("s2"));

      assertThat(run(sandbox, "echo booted")).isEqualTo("booted\n");
      assertThat(second.status().enforced().get("vm_state"))
          .contains("discarded: a restore failed")
          .endsWith("0 VMs restored, 0 templates booted since the server started");
      assertThat(saved).doesNotExist();
      sandbox.destroy();
    }
  }

  @Test
  void theKey_changesWithTheKernelAndTheInitramfs_andAStaleStateIsRemoved(@TempDir Path dir)
      throws Exception {
    MicrovmFiles files =
        new MicrovmFiles(
            Files.writeString(dir.resolve("qemu"), "q"),
            Files.writeString(dir.resolve("kernel"), "k"),
            Files.createDirectory(dir.resolve("modules")),
            Files.writeString(dir.resolve("rootfs"), "r"),
            1000,
            false);
    Path initramfs = Files.writeString(dir.resolve("initramfs"), "i");
    GuestConfig pooled =
        new GuestConfig(512, 100, 1, MicrovmBackendTest.SANDBOX_UID, List.of(), false);
    String key = VmState.key(files, initramfs, pooled, KvmProbe.Accel.TCG);
    ScheduledExecutorService timers = Executors.newSingleThreadScheduledExecutor();
    try {
      Path saved = dir.resolve("saved");
      VmState first =
          new VmState(saved, key, MicrovmBackendTest.SANDBOX_UID, timers, Clock.systemUTC());
      assertThat(first.ensure(into -> Files.writeString(into, "state"))).isEqualTo(first.file());
      assertThat(Files.getPosixFilePermissions(first.file()))
          .containsExactlyInAnyOrderElementsOf(PosixFilePermissions.fromString("rw-------"));
      assertThat(new VmState(saved, key, 1, timers, Clock.systemUTC()).status())
          .startsWith("found at start");

      Files.setLastModifiedTime(
          files.kernel(), FileTime.from(Instant.now().minus(Duration.ofDays(1))));
      String newKernel = VmState.key(files, initramfs, pooled, KvmProbe.Accel.TCG);
      Files.writeString(initramfs, "j");
      String newInit = VmState.key(files, initramfs, pooled, KvmProbe.Accel.TCG);
      MicrovmFiles withAcpi =
          new MicrovmFiles(
              files.qemu(), files.kernel(), files.modules(), files.rootfs(), files.tscKhz(), true);
      String newMachine = VmState.key(withAcpi, initramfs, pooled, KvmProbe.Accel.TCG);
      String newVcpus =
          VmState.key(
              withAcpi,
              initramfs,
              new GuestConfig(512, 100, 2, MicrovmBackendTest.SANDBOX_UID, List.of(), false),
              KvmProbe.Accel.TCG);

      assertThat(List.of(newKernel, newInit, newMachine, newVcpus))
          .doesNotContain(key)
          .doesNotHaveDuplicates();
      VmState next = new VmState(saved, newInit, 1, timers, Clock.systemUTC());
      assertThat(next.status()).startsWith("none yet");
      assertThat(first.file()).doesNotExist();
    } finally {
      timers.shutdownNow();
    }
  }

  private static MicrovmBackend backend(Path state, Path files, int poolSize) {
    return new MicrovmBackend(
        state,
        files,
        BackendRuntime.system(),
        poolSize,
        EgressPolicy.DEFAULT,
        MicrovmBackendTest.SANDBOX_UID);
  }

  private static SandboxSpec pooledSpec(String session) {
    return MicrovmBackendTest.spec(
        session,
        BoxNetworkMode.OFF,
        SandboxShape.pooled().memoryMb(),
        SandboxShape.pooled().pidsLimit());
  }

  private static String run(Sandbox in, String script) throws Exception {
    SandboxProcess p =
        in.spawn(new ProcessSpec(new ProcessSpec.Shell(script), "/workspace", Map.of(), false));
    String out = new String(p.stdout().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(Duration.ofSeconds(60))).hasValue(0);
    p.release();
    return out;
  }
}
