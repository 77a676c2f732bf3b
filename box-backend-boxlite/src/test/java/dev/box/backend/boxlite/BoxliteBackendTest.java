package dev.box.backend.boxlite;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.box.api.BoxEgress;
import dev.box.api.BoxException;
import dev.box.api.BoxNetworkMode;
import dev.box.api.BoxSpec;
import dev.box.api.BoxValidationException;
import dev.box.core.Hashes;
import dev.box.core.backend.ProcessSpec;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxMount;
import dev.box.core.backend.SandboxProcess;
import dev.box.core.backend.SandboxSpec;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The BoxLite backend on its own, against {@link FakeBoxlite} (a fake: BoxLite needs KVM, which
 * this machine lacks): executions over the attach socket, kills, a refused token, boxes of other
 * servers, and what a box cannot give.
 */
class BoxliteBackendTest {
  private static final String TOKEN = "token-" + Long.toHexString(System.nanoTime());

  @TempDir Path temp;
  @AutoClose private FakeBoxlite fake;

  @BeforeEach
  void startFake() throws IOException {
    fake = FakeBoxlite.start(TOKEN);
  }

  @Test
  void exec_carriesStdoutStderrAndTheExitCode_andRunsInTheWorkspace() throws Exception {
    try (BoxliteBackend backend = backend("one", state())) {
      Sandbox sandbox = backend.start(spec("one", false));

      SandboxProcess process =
          sandbox.spawn(
              new ProcessSpec(
                  new ProcessSpec.Shell("echo out; echo err >&2; pwd; exit 7"),
                  "/workspace",
                  Map.of(),
                  false));

      assertThat(process.waitFor(Duration.ofSeconds(60))).hasValue(7);
      assertThat(text(process.stdout().readAllBytes())).isEqualTo("out\n/workspace\n");
      assertThat(text(process.stderr().readAllBytes())).isEqualTo("err\n");
      sandbox.destroy();
      assertThat(sandbox.isAlive()).isFalse();
    }
  }

  @Test
  void stdin_reachesTheProcess_andItsEndEndsIt() throws Exception {
    try (BoxliteBackend backend = backend("stdin", state())) {
      Sandbox sandbox = backend.start(spec("stdin", false));
      SandboxProcess process =
          sandbox.spawn(new ProcessSpec(new ProcessSpec.Argv(List.of("cat")), "/", Map.of(), true));

      try (OutputStream stdin = process.stdin()) {
        stdin.write("line one\n".getBytes(StandardCharsets.UTF_8));
        stdin.write(new byte[200_000]);
      }

      assertThat(process.waitFor(Duration.ofSeconds(60))).hasValue(0);
      byte[] out = process.stdout().readAllBytes();
      assertThat(out).hasSize("line one\n".length() + 200_000);
      assertThat(text(out)).startsWith("line one\n");
      sandbox.destroy();
    }
  }

  @Test
  void killTree_killsTheWholeTreeInsideTheBox_andTheBoxLivesOn() throws Exception {
    String marker = Long.toString(900_000_000L + ThreadLocalRandom.current().nextLong(99_999_999L));
    try (BoxliteBackend backend = backend("kill", state())) {
      Sandbox sandbox = backend.start(spec("kill", false));
      SandboxProcess process =
          sandbox.spawn(
              new ProcessSpec(
                  new ProcessSpec.Shell(
                      "trap '' TERM; (setsid sleep " + marker + " &); sleep " + marker),
                  "/",
                  Map.of(),
                  false));
      awaitProcesses(marker, 2);

      process.killTree();

      assertThat(process.waitFor(Duration.ofSeconds(60))).hasValue(BoxliteProcess.LOST);
      awaitProcesses(marker, 0);
      assertThat(sandbox.isAlive()).isTrue();
      SandboxProcess after =
          sandbox.spawn(new ProcessSpec(new ProcessSpec.Shell("echo alive"), "/", Map.of(), false));
      assertThat(after.waitFor(Duration.ofSeconds(60))).hasValue(0);
      sandbox.destroy();
    }
  }

  @Test
  void aRefusedToken_makesTheBackendUnavailable_sayingSoWithoutTheToken() throws IOException {
    BoxliteSettings wrong = new BoxliteSettings(fake.url(), "wrong-" + TOKEN, null);
    try (BoxliteBackend backend = new BoxliteBackend(wrong, state(), "x")) {
      assertThat(backend.status().available()).isFalse();
      assertThat(backend.status().reason())
          .contains("refused the token (401)")
          .contains("boxlite_token")
          .doesNotContain(TOKEN);
      assertThatThrownBy(() -> backend.start(spec("x", false)))
          .isInstanceOf(BoxException.class)
          .hasMessageContaining("401")
          .hasMessageNotContaining(TOKEN);
    }
  }

  @Test
  void anUnreachableServerOrNoToken_isUnavailable_namingWhatToFix() throws IOException {
    try (BoxliteBackend none = new BoxliteBackend(BoxliteSettings.read(Map.of()), state(), "x");
        BoxliteBackend closed =
            new BoxliteBackend(new BoxliteSettings("http://127.0.0.1:9", TOKEN, null), temp, "y")) {
      assertThat(none.status().reason()).contains("boxlite_token").contains("BOX_BOXLITE_TOKEN");
      assertThat(closed.status().available()).isFalse();
      assertThat(closed.status().reason()).contains("http://127.0.0.1:9 is unreachable");
    }
  }

  @Test
  void removeOrphans_removesOnlyTheBoxesOfEarlierServersOnTheSameDataDir() throws Exception {
    Path state = state();
    Path otherState = Files.createDirectory(temp.resolve("other"));
    try (BoxliteBackend earlier = backend("earlier", state);
        BoxliteBackend current = backend("current", state);
        BoxliteBackend elsewhere = backend("elsewhere", otherState)) {
      String lost = earlier.start(spec("earlier", false)).id();
      String kept = earlier.start(spec("kept", true)).id();
      String own = current.start(spec("current", false)).id();
      String foreign = elsewhere.start(spec("elsewhere", false)).id();

      current.removeOrphansSparingPersistent();
      assertThat(boxesOf(state)).containsExactlyInAnyOrder(own, kept);
      Sandbox adopted = current.adopt(spec("kept", true));
      current.removeOrphans();

      assertThat(adopted).extracting(Sandbox::id).isEqualTo(kept);
      assertThat(boxesOf(state)).containsExactlyInAnyOrder(own, kept);
      assertThat(boxesOf(otherState)).containsExactly(foreign);
      assertThat(lost).isNotIn(own, foreign, kept);
    }
  }

  @Test
  void whatABoxCannotGive_isRefused_andNoBoxIsMade() throws IOException {
    try (BoxliteBackend backend = backend("refuse", state())) {
      SandboxSpec base = spec("refuse", false);
      SandboxMount host = new SandboxMount(temp, "/workspace", false, false);
      SandboxMount readOnly = new SandboxMount(temp, "/workspace", true, true);
      BoxEgress egress =
          new BoxEgress(BoxEgress.parseAll("allow_out", List.of("10.0.0.0/8")), List.of());

      assertThatThrownBy(() -> backend.start(with(base, host, List.of(), BoxEgress.NONE)))
          .isInstanceOf(BoxValidationException.class)
          .hasMessageContaining("host_path");
      assertThatThrownBy(() -> backend.start(with(base, null, List.of(host), BoxEgress.NONE)))
          .isInstanceOf(BoxValidationException.class)
          .hasMessageContaining("extra_mounts");
      assertThatThrownBy(() -> backend.start(with(base, readOnly, List.of(), BoxEgress.NONE)))
          .isInstanceOf(BoxValidationException.class)
          .hasMessageContaining("host_path_mode ro");
      assertThatThrownBy(() -> backend.start(with(base, null, List.of(), egress)))
          .isInstanceOf(BoxValidationException.class)
          .hasMessageContaining("egress rules");
      assertThat(boxesOf(state())).isEmpty();
    }
  }

  private void awaitProcesses(String marker, int count) throws InterruptedException {
    for (int i = 0; i < 600 && taggedSleeps(marker) != count; i++) {
      Thread.sleep(100);
    }
    assertThat(taggedSleeps(marker)).as("sleep processes of the tree").isEqualTo(count);
  }

  private static long taggedSleeps(String marker) {
    return ProcessHandle.allProcesses()
        .filter(
            h ->
                h.info().arguments().map(a -> List.of(a).contains(marker)).orElse(false)
                    && h.info().command().map(c -> c.endsWith("sleep")).orElse(false))
        .count();
  }

  /** The ids of the boxes of the server on {@code state}. */
  private List<String> boxesOf(Path state) {
    return fake.boxesOf(Hashes.shortSha256(state.toString())).stream()
        .map(box -> box.substring(0, box.indexOf(' ')))
        .toList();
  }

  private Path state() throws IOException {
    Path state = temp.resolve("state");
    return Files.isDirectory(state) ? state : Files.createDirectory(state);
  }

  private BoxliteBackend backend(String instance, Path state) {
    return new BoxliteBackend(new BoxliteSettings(fake.url(), TOKEN, null), state, instance);
  }

  private SandboxSpec spec(String name, boolean persistent) {
    return spec(name, new SandboxMount(temp, "/workspace", false, true), persistent);
  }

  /** A session {@code name} of the instance {@code name}, with the network off. */
  static SandboxSpec spec(String name, @Nullable SandboxMount workspace, boolean persistent) {
    return new SandboxSpec(
        "s-" + name,
        name + "_s",
        name,
        BoxSpec.DEFAULT_IMAGE,
        BoxNetworkMode.OFF,
        workspace,
        List.of(),
        false,
        2,
        256,
        64,
        BoxEgress.NONE,
        persistent,
        null);
  }

  private static SandboxSpec with(
      SandboxSpec base,
      @Nullable SandboxMount workspace,
      List<SandboxMount> extra,
      BoxEgress egress) {
    return new SandboxSpec(
        base.sessionId(),
        base.sandboxName(),
        base.instanceId(),
        base.image(),
        base.network(),
        workspace,
        extra,
        base.readOnlyRootfs(),
        base.cpus(),
        base.memoryMb(),
        base.pidsLimit(),
        egress,
        base.persistent(),
        null);
  }

  private static String text(byte[] bytes) {
    return new String(bytes, StandardCharsets.UTF_8);
  }
}
