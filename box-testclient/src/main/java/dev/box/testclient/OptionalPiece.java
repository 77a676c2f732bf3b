package dev.box.testclient;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Assumptions;

/**
 * A piece outside the repository that some tests need and a fresh machine may lack: a test that
 * needs one calls {@link #assumePresent} and is skipped, with the reason, when it is missing, so a
 * newcomer's run stays green and says what it did not test ({@code scripts/test} lists the skips at
 * its end). Where the run must not skip it, {@code BOX_TEST_REQUIRE} names it (a comma-separated
 * list of {@link #key()}s, or {@code all}) and a missing piece fails the test instead: {@code
 * .ci/run} requires nsjail and LangBot's client that way.
 *
 * <p>What the project builds itself (box-guard, box-agent, box-mounter) is never optional and has
 * no constant here.
 */
public enum OptionalPiece {
  /** The nsjail binary, which {@code scripts/nsjail} builds from its pinned source. */
  NSJAIL("nsjail"),
  /** LangBot's own Python client, which {@code scripts/python-client} sets up. */
  LANGBOT_CLIENT("langbot-client"),
  /** Docker Compose v2 ({@code docker compose}), for the image's end-to-end test. */
  DOCKER_COMPOSE("docker-compose"),
  /** A second dockerd on a btrfs data root, which {@code scripts/engines up} starts. */
  BTRFS_DOCKERD("btrfs-dockerd"),
  /** The MCP test server from the npm registry, which {@code scripts/mcp-fixture} installs. */
  MCP_FIXTURE("mcp-fixture"),
  /**
   * E2B's JS SDK from the npm registry and Node >= 20.18.1, which {@code scripts/e2b-sdk} sets up.
   */
  E2B_SDK("e2b-sdk"),
  /** Debian's chromium, for the test that opens a preview link in a real (headless) browser. */
  CHROMIUM("chromium"),
  /**
   * QEMU, the guest kernel and the default root of the microvm backend ({@code scripts/microvm}).
   */
  MICROVM("microvm");

  /** The variable that turns a missing piece into a failure. */
  public static final String REQUIRE_VARIABLE = "BOX_TEST_REQUIRE";

  private static final List<Path> SYSTEM_DIRS =
      List.of("/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin").stream()
          .map(Path::of)
          .toList();

  private final String key;

  OptionalPiece(String key) {
    this.key = key;
  }

  /** The name {@code BOX_TEST_REQUIRE} lists this piece by. */
  public String key() {
    return key;
  }

  /** Whether this run must not skip this piece ({@code BOX_TEST_REQUIRE} names it, or all). */
  public boolean required() {
    return required(System.getenv(REQUIRE_VARIABLE), key);
  }

  static boolean required(@Nullable String requireVariable, String key) {
    if (requireVariable == null) {
      return false;
    }
    Set<String> keys =
        Arrays.stream(requireVariable.split(","))
            .map(s -> s.strip().toLowerCase(Locale.ROOT))
            .collect(Collectors.toSet());
    return keys.contains("all") || keys.contains(key);
  }

  /**
   * Skips the calling test (or, from a {@code @BeforeAll}, its class) with {@code reason} unless
   * {@code present}; where the piece is {@linkplain #required() required}, fails instead.
   *
   * @throws AssertionError when the piece is missing and required
   */
  public void assumePresent(boolean present, String reason) {
    if (present) {
      return;
    }
    String message = key + " missing: " + reason;
    if (required()) {
      throw new AssertionError(message + " (" + REQUIRE_VARIABLE + " requires " + key + ")");
    }
    Assumptions.abort(message);
  }

  /**
   * {@link #NSJAIL}: skips the calling test unless an nsjail binary is in one of the system
   * directories the nsjail backend looks in.
   */
  public static void assumeNsjail() {
    NSJAIL.assumePresent(
        nsjailBinary() != null,
        "no nsjail in /usr/bin, /bin, /usr/sbin, /sbin or /usr/local/bin (scripts/nsjail builds"
            + " it from its pinned source)");
  }

  /**
   * Skips the calling test unless the tool the backend named needs is there; only nsjail is not
   * installed by the scripts of every run (the others are Debian packages, or the project's own).
   */
  public static void assumeBackend(String backend) {
    if (backend.equals("nsjail")) {
      assumeNsjail();
    }
  }

  private static @Nullable Path nsjailBinary() {
    return SYSTEM_DIRS.stream()
        .map(d -> d.resolve("nsjail"))
        .filter(Files::isExecutable)
        .findFirst()
        .orElse(null);
  }
}
