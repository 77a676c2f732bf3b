package dev.box.server;

import dev.box.testclient.OptionalPiece;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * E2B's unchanged JS SDK, installed outside the repository by {@code scripts/e2b-sdk} (pinned by
 * {@code src/test/e2b/package-lock.json}), and the Node that runs scripts against it. Without Node
 * >= 20.18.1 or the npm registry the calling test is skipped with the reason, or fails where {@link
 * OptionalPiece#E2B_SDK} is required.
 */
final class E2bSdk {
  /** Where the SDK is installed unless {@code box.e2b.cache} says otherwise. */
  static final Path CACHE =
      Path.of(System.getProperty("box.e2b.cache", "/var/tmp/box-test-cache/e2b-sdk"));

  private final Path entry;

  private E2bSdk(Path entry) {
    this.entry = entry;
  }

  /** The SDK, installed first when the cache does not hold it. */
  static E2bSdk install() {
    Path script = Path.of("../scripts/e2b-sdk");
    Result install = run(List.of(script.toString(), CACHE.toString()), Map.of(), 10);
    OptionalPiece.E2B_SDK.assumePresent(
        install.exit == 0, script + " could not install it: " + install.output);
    Path entry = CACHE.resolve("node_modules/e2b/dist/index.mjs");
    if (!Files.isRegularFile(entry)) {
      throw new AssertionError(script + " left no " + entry);
    }
    return new E2bSdk(entry);
  }

  /** What a script printed (stdout and stderr together) and its exit code. */
  record Result(int exit, String output) {}

  /**
   * Runs {@code src/test/e2b/<script>} against the server on {@code port} with {@code apiKey} as
   * E2B_API_KEY.
   */
  Result script(String script, int port, @Nullable String apiKey) {
    String base = "http://127.0.0.1:" + port + "/e2b";
    String node = System.getenv().getOrDefault("BOX_NODE", "node");
    return run(
        List.of(node, Path.of("src/test/e2b", script).toString()),
        Map.of(
            "E2B_API_URL",
            base,
            "E2B_SANDBOX_URL",
            base + "/envd",
            "E2B_API_KEY",
            apiKey == null ? "any" : apiKey,
            "E2B_MODULE",
            entry.toUri().toString()),
        5);
  }

  /**
   * Runs the example {@code docs/examples/<example>} unchanged (it imports {@code 'e2b'}), from a
   * copy in a directory whose {@code node_modules} is the SDK's cache, against the server on {@code
   * port} with {@code apiKey} as E2B_API_KEY.
   */
  Result example(String example, int port, String apiKey) {
    try {
      Path dir = Files.createTempDirectory("box-e2b-example-");
      Files.createSymbolicLink(dir.resolve("node_modules"), CACHE.resolve("node_modules"));
      Path copy = Files.copy(Path.of("../docs/examples", example), dir.resolve(example));
      String base = "http://127.0.0.1:" + port + "/e2b";
      return run(
          List.of(System.getenv().getOrDefault("BOX_NODE", "node"), copy.toString()),
          Map.of("E2B_API_URL", base, "E2B_SANDBOX_URL", base + "/envd", "E2B_API_KEY", apiKey),
          5);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Result run(List<String> command, Map<String, String> env, int minutes) {
    try {
      ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
      builder.environment().keySet().removeIf(key -> key.startsWith("E2B_"));
      builder.environment().putAll(env);
      Process process = builder.start();
      process.getOutputStream().close();
      String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!process.waitFor(minutes, TimeUnit.MINUTES)) {
        process.destroyForcibly();
        throw new AssertionError(command + " did not end: " + output);
      }
      return new Result(process.exitValue(), output);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot run " + command, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }
}
