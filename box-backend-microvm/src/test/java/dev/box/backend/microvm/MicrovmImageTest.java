package dev.box.backend.microvm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.box.api.BoxCapabilities;
import dev.box.api.BoxEgress;
import dev.box.api.BoxNetworkMode;
import dev.box.api.BoxSpec;
import dev.box.api.BoxValidationException;
import dev.box.core.backend.ProcessSpec;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxProcess;
import dev.box.core.backend.SandboxSpec;
import dev.box.core.net.EgressPolicy;
import dev.box.sandbox.BackendRuntime;
import dev.box.sandbox.engine.EngineClient;
import dev.box.sandbox.engine.EnginePaths;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * Sessions booted from their own images, with a real Docker engine ({@code DOCKER_SOCKET}) and real
 * VMs: the test makes, with the engine, an image of {@code BOX_TEST_IMAGE} with a marker file, and
 * one whose {@code /bin/sh} is removed. The roots are kept in a files directory of the test's own
 * (the VMs' kernel and QEMU are those {@code scripts/microvm} prepared), so that nothing is left in
 * the shared cache. Skipped without the micro-VM files or the engine.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MicrovmImageTest {
  private static final Duration CALL = Duration.ofSeconds(60);
  private static final String BASE =
      System.getenv().getOrDefault("BOX_TEST_IMAGE", "box-debian:bookworm");
  private static final String MARKER = "/box-image-marker";

  private final String tag = HexFormat.of().formatHex(new SecureRandom().generateSeed(4));
  private final String marked = "box-microvm-test:marked-" + tag;
  private final String shellless = "box-microvm-test:no-shell-" + tag;
  private EngineClient engine;
  private MicrovmBackend backend;
  private Path files;

  @BeforeAll
  void setUp(@TempDir Path state, @TempDir Path files) throws Exception {
    Path cache = MicrovmFiles.dir(System.getenv("BOX_MICROVM_CACHE"));
    assumeTrue(
        Files.isRegularFile(cache.resolve(MicrovmFiles.MANIFEST)),
        "no micro-VM files in " + cache + ": run scripts/microvm");
    Path socket = Path.of(System.getenv().getOrDefault("DOCKER_SOCKET", "/var/run/docker.sock"));
    assumeTrue(Files.exists(socket), "no Docker engine at " + socket + ": run scripts/engines up");
    engine = new EngineClient(socket, BackendRuntime.system());
    assumeTrue(
        engine.call("GET", EnginePaths.inspectImage(BASE), null, CALL).ok(),
        "the engine has no " + BASE + ": run scripts/engines up");
    commit(List.of("/bin/sh", "-c", "echo marked > " + MARKER), marked);
    commit(List.of("/bin/rm", "-f", "/usr/bin/sh", "/bin/sh"), shellless);

    // QEMU, the sandbox uid, opens the roots by their path.
    Files.setPosixFilePermissions(files, PosixFilePermissions.fromString("rwxr-xr-x"));
    for (String file : List.of(MicrovmFiles.MANIFEST, KvmProbe.FILE)) {
      if (Files.exists(cache.resolve(file))) {
        Files.copy(cache.resolve(file), files.resolve(file));
      }
    }
    this.files = files;
    backend =
        new MicrovmBackend(
            state,
            files,
            BackendRuntime.system(),
            0,
            EgressPolicy.DEFAULT,
            MicrovmBackendTest.SANDBOX_UID,
            new MicrovmImages(socket, null, MicrovmImages.DEFAULT_MAX_MB));
    assertThat(backend.status().available()).as(backend.status().reason()).isTrue();
  }

  /** Runs {@code cmd} in a container of the base image, with no network, and commits it. */
  private void commit(List<String> cmd, String image) throws IOException {
    EngineClient.Response created =
        engine.call(
            "POST",
            "/containers/create",
            Map.of("Image", BASE, "Cmd", cmd, "HostConfig", Map.of("NetworkMode", "none")),
            CALL);
    assertThat(created.ok()).as(created.message()).isTrue();
    String id = created.json().path("Id").asText();
    try {
      assertThat(engine.call("POST", "/containers/" + id + "/start", null, CALL).ok()).isTrue();
      EngineClient.Response waited = engine.call("POST", "/containers/" + id + "/wait", null, CALL);
      assertThat(waited.json().path("StatusCode").asInt(-1)).isZero();
      String[] parts = image.split(":");
      EngineClient.Response committed =
          engine.call(
              "POST",
              "/commit?container=" + id + "&repo=" + parts[0] + "&tag=" + parts[1],
              Map.of(),
              CALL);
      assertThat(committed.ok()).as(committed.message()).isTrue();
    } finally {
      engine.call("DELETE", "/containers/" + id + "?force=1", null, CALL);
    }
  }

  @AfterAll
  void tearDown() throws IOException {
    if (backend != null) {
      backend.close();
    }
    if (engine != null) {
      for (String image : List.of(marked, shellless)) {
        engine.call("DELETE", "/images/" + image + "?force=1", null, CALL);
      }
      engine.close();
    }
  }

  private static SandboxSpec spec(String session, String image) {
    return new SandboxSpec(
        session,
        "i_" + session,
        "i",
        image,
        BoxNetworkMode.OFF,
        null,
        List.of(),
        false,
        1,
        256,
        64,
        BoxEgress.NONE,
        false,
        null);
  }

  private static String run(Sandbox in, String script) throws Exception {
    SandboxProcess p =
        in.spawn(new ProcessSpec(new ProcessSpec.Shell(script), "/workspace", Map.of(), false));
    String out = new String(p.stdout().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(Duration.ofSeconds(60))).hasValue(0);
    p.release();
    return out;
  }

  @Test
  void imagesAreDeclared_withTheEngineTheyComeFrom() {
    assertThat(backend.status().capabilities()).contains(BoxCapabilities.IMAGES);
    assertThat(backend.status().enforced().get("images")).contains("exported once from the engine");
  }

  @Test
  void aSessionOfItsOwnImage_bootsThatImagesRoot_andTheDefaultImageTheDefaultRoot()
      throws Exception {
    Sandbox own = backend.start(spec("own", marked));
    try {
      assertThat(run(own, "cat " + MARKER + "; id -u; echo x > f && cat f"))
          .isEqualTo("marked\n" + MicrovmBackendTest.SANDBOX_UID + "\nx\n");
    } finally {
      own.destroy();
    }
    // One root per image id, kept by it, read-only for everyone.
    try (Stream<Path> roots = Files.list(files.resolve("images"))) {
      List<Path> ext4 = roots.filter(p -> p.toString().endsWith(".ext4")).toList();
      assertThat(ext4).hasSize(1);
      assertThat(ext4.getFirst().getFileName().toString()).matches("[0-9a-f]{64}\\.ext4");
      assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(ext4.getFirst())))
          .isEqualTo("r--r--r--");
    }

    Sandbox standard = backend.start(spec("default", BoxSpec.DEFAULT_IMAGE));
    try {
      assertThat(run(standard, "test -e " + MARKER + " && echo marked || echo default"))
          .isEqualTo("default\n");
    } finally {
      standard.destroy();
    }
  }

  @Test
  void anImageTheEngineDoesNotHave_isAValidationErrorNamingIt() {
    String missing = "box-microvm-test:missing-" + tag;

    assertThatThrownBy(() -> backend.start(spec("missing", missing)))
        .isInstanceOf(BoxValidationException.class)
        .hasMessageContaining("image " + missing + " is not present in the container engine");
  }

  @Test
  void anImageWithoutAShell_isRefusedBeforeAnyVmBoots() {
    assertThatThrownBy(() -> backend.start(spec("shellless", shellless)))
        .isInstanceOf(BoxValidationException.class)
        .hasMessageContaining("image " + shellless + " cannot be a micro-VM's root")
        .hasMessageContaining("no executable /bin/sh");
    assertThat(backend.pids()).isEmpty();
  }
}
