package dev.box.backend.e2b;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.box.api.BoxEgress;
import dev.box.api.BoxException;
import dev.box.api.BoxNetworkMode;
import dev.box.api.BoxSpec;
import dev.box.core.Hashes;
import dev.box.core.backend.ProcessSpec;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxMount;
import dev.box.core.backend.SandboxProcess;
import dev.box.core.backend.SandboxSpec;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.Executors;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The E2B backend on its own, against {@link FakeE2b} (a fake: no E2B service is reachable from
 * this machine): what the conformance suite cannot see from outside, such as a sandbox that sends
 * hostile paths back, sandboxes of other servers, and a refused API key.
 */
class E2bBackendTest {
  private static final String KEY = "test-key-" + Long.toHexString(System.nanoTime());

  @TempDir Path temp;
  @AutoClose private FakeE2b fake;

  @BeforeEach
  void startFake() throws IOException {
    fake = FakeE2b.start(KEY);
  }

  @Test
  void filesComingBack_neverFollowAHostSymlinkOutOfTheMount() throws Exception {
    Path outside = Files.createDirectory(temp.resolve("outside"));
    Path workspace = Files.createDirectory(temp.resolve("workspace"));
    Files.setPosixFilePermissions(workspace, PosixFilePermissions.fromString("rwxrwxrwx"));
    Files.createSymbolicLink(workspace.resolve("escape"), outside);
    try (E2bBackend backend = backend("one", Files.createDirectory(temp.resolve("state")))) {
      Sandbox sandbox =
          backend.start(spec("one", new SandboxMount(workspace, "/workspace", false, false)));
      int code =
          run(
              sandbox,
              "mkdir /workspace/escape && echo pwned > /workspace/escape/f"
                  + " && echo fine > /workspace/kept");

      assertThat(code).isZero();
      assertThat(workspace.resolve("kept")).hasContent("fine");
      assertThat(outside.resolve("f")).doesNotExist();
      assertThat(Files.isSymbolicLink(workspace.resolve("escape"))).isTrue();
      sandbox.destroy();
    }
  }

  @Test
  void removeOrphans_killsOnlyTheSandboxesOfEarlierServersOnTheSameDataDir() throws Exception {
    Path state = Files.createDirectory(temp.resolve("state"));
    Path otherState = Files.createDirectory(temp.resolve("other"));
    try (E2bBackend earlier = backend("earlier", state);
        E2bBackend current = backend("current", state);
        E2bBackend elsewhere = backend("elsewhere", otherState)) {
      String lost = earlier.start(spec("earlier", null)).id();
      String own = current.start(spec("current", null)).id();
      String foreign = elsewhere.start(spec("elsewhere", null)).id();

      current.removeOrphans();

      String label = Hashes.shortSha256(state.toString());
      assertThat(fake.sandboxes("dev.box.data", label)).containsExactly(own);
      assertThat(fake.sandboxes("dev.box.instance", "elsewhere")).containsExactly(foreign);
      assertThat(lost).isNotIn(own, foreign);
    }
  }

  @Test
  void aRefusedApiKey_isBackendUnavailable_withoutTheKeyInTheMessage() throws IOException {
    E2bSettings wrong = new E2bSettings("wrong-" + KEY, fake.apiUrl(), "base", fake.envdUrl());
    try (E2bBackend backend =
        new E2bBackend(
            wrong,
            Files.createDirectory(temp.resolve("state")),
            "x",
            1000,
            Executors.newSingleThreadScheduledExecutor())) {
      assertThatThrownBy(() -> backend.start(spec("x", null)))
          .isInstanceOf(BoxException.class)
          .hasMessageContaining("401")
          .hasMessageNotContaining(KEY);
    }
  }

  private E2bBackend backend(String instance, Path state) {
    return new E2bBackend(
        new E2bSettings(KEY, fake.apiUrl(), "base", fake.envdUrl()),
        state,
        instance,
        1000,
        Executors.newSingleThreadScheduledExecutor());
  }

  private static SandboxSpec spec(String instance, @Nullable SandboxMount workspace) {
    return new SandboxSpec(
        "s-" + instance,
        instance + "_s",
        instance,
        BoxSpec.DEFAULT_IMAGE,
        BoxNetworkMode.OFF,
        workspace,
        List.of(),
        false,
        1,
        512,
        128,
        BoxEgress.NONE,
        false,
        null);
  }

  private static int run(Sandbox sandbox, String script) throws InterruptedException {
    SandboxProcess process =
        sandbox.spawn(new ProcessSpec(new ProcessSpec.Shell(script), "/", Map.of(), false));
    OptionalInt code = process.waitFor(Duration.ofSeconds(60));
    assertThat(code).as("the process ended").isPresent();
    if (code.getAsInt() != 0) {
      try {
        System.out.println(new String(process.stderr().readAllBytes(), StandardCharsets.UTF_8));
      } catch (IOException e) {
        // Only for the failure's message.
      }
    }
    return code.getAsInt();
  }
}
