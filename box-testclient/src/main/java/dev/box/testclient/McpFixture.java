package dev.box.testclient;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The reference MCP server "everything" ({@code @modelcontextprotocol/server-everything} from the
 * npm registry), installed outside the repository by {@code scripts/mcp-fixture}; the MCP tests and
 * the syscall filter suite run it.
 */
public final class McpFixture {
  /** Where the fixture is installed unless {@code box.mcp.cache} says otherwise. */
  public static final Path CACHE =
      Path.of(System.getProperty("box.mcp.cache", "/var/tmp/box-test-cache/mcp-everything"));

  private McpFixture() {}

  /**
   * The server's entry point: {@code box.mcp.entry} when set, else what {@code scripts/mcp-fixture}
   * prints, which installs the package into {@link #CACHE} first when it is not there yet (so that
   * {@code mvn verify} alone works). Without the fixture (no npm registry, no Node) the calling
   * test is skipped with the reason, or fails where {@link OptionalPiece#MCP_FIXTURE} is required.
   */
  public static Path entryPoint() {
    String configured = System.getProperty("box.mcp.entry");
    if (configured != null && !configured.isBlank()) {
      Path entry = Path.of(configured);
      if (!Files.isRegularFile(entry)) {
        throw new AssertionError("box.mcp.entry names no file: " + entry);
      }
      return entry;
    }
    Path script = Path.of(System.getProperty("box.mcp.fixture", "../scripts/mcp-fixture"));
    try {
      Process install =
          new ProcessBuilder(List.of(script.toString(), CACHE.toString()))
              .redirectError(ProcessBuilder.Redirect.INHERIT)
              .start();
      install.getOutputStream().close();
      String out = new String(install.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      boolean done = install.waitFor(10, TimeUnit.MINUTES);
      if (!done) {
        install.destroyForcibly();
      }
      OptionalPiece.MCP_FIXTURE.assumePresent(
          done && install.exitValue() == 0, script + " could not install it; it printed: " + out);
      Path entry = Path.of(out.strip().lines().reduce((a, b) -> b).orElse(""));
      if (!entry.isAbsolute() || !Files.isRegularFile(entry) || !entry.startsWith(CACHE)) {
        throw new AssertionError(script + " printed no entry point under " + CACHE + ": " + out);
      }
      return entry;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot run " + script, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }
}
