package dev.box.backend.microvm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.box.api.BoxNetworkMode;
import dev.box.core.backend.PoolLevel;
import dev.box.core.backend.ProcessSpec;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxMount;
import dev.box.core.backend.SandboxProcess;
import dev.box.core.net.EgressPolicy;
import dev.box.sandbox.BackendRuntime;
import dev.box.sandbox.SandboxShape;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The backend's pool with real VMs: a session of the pooled limits takes a VM that booted before it
 * was asked for, the pool boots its replacement, and closing the backend leaves no QEMU. Needs what
 * {@code scripts/microvm} prepares; without it the class is skipped.
 */
class VmPoolTest {
  private static final Duration BOOTS = Duration.ofMinutes(3);

  @Test
  void aSessionTakesABootedVm_thePoolBootsAnother_andCloseLeavesNoQemu(@TempDir Path state)
      throws Exception {
    Path files = MicrovmFiles.dir(System.getenv("BOX_MICROVM_CACHE"));
    assumeTrue(
        Files.isRegularFile(files.resolve(MicrovmFiles.MANIFEST)),
        "no micro-VM files in " + files + ": run scripts/microvm");
    List<Long> qemus = new ArrayList<>();
    try (MicrovmBackend backend =
        new MicrovmBackend(
            state,
            files,
            BackendRuntime.system(),
            1,
            EgressPolicy.DEFAULT,
            MicrovmBackendTest.SANDBOX_UID)) {
      await().atMost(BOOTS).until(() -> backend.poolLevel().equals(new PoolLevel(1, 1)));
      assertThat(backend.status().enforced().get("pool")).startsWith("1 of 1 VMs booted");
      String pooled = backend.pids().keySet().iterator().next();

      // A non-persistent session's own workspace, where Box keeps private workspaces (the
      // workspace store), stays in the VM: the session takes the pooled VM.
      Path own = Files.createDirectories(state.resolve("store").resolve("ws-s1"));
      Sandbox sandbox =
          backend.start(
              MicrovmBackendTest.spec(
                      "s1",
                      BoxNetworkMode.OFF,
                      SandboxShape.pooled().memoryMb(),
                      SandboxShape.pooled().pidsLimit())
                  .withMounts(new SandboxMount(own, "/workspace", false, true), List.of()));

      assertThat(sandbox.id()).isEqualTo(pooled);
      SandboxProcess p =
          sandbox.spawn(
              new ProcessSpec(
                  new ProcessSpec.Shell("echo in-the-vm"), "/workspace", Map.of(), false));
      assertThat(new String(p.stdout().readAllBytes(), StandardCharsets.UTF_8))
          .isEqualTo("in-the-vm\n");
      assertThat(p.waitFor(Duration.ofSeconds(60))).hasValue(0);
      p.release();
      await().atMost(BOOTS).until(() -> backend.poolLevel().equals(new PoolLevel(1, 1)));
      assertThat(backend.pids()).hasSize(2).containsKey(pooled);
      qemus.addAll(backend.pids().values());
    }
    assertThat(qemus)
        .allSatisfy(
            pid -> assertThat(ProcessHandle.of(pid).filter(ProcessHandle::isAlive)).isEmpty());
  }
}
