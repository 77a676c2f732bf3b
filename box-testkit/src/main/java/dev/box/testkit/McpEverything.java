package dev.box.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The reference MCP server "everything" ({@code @modelcontextprotocol/server-everything} from the
 * npm registry), installed outside the repository by {@code scripts/mcp-fixture}, as box-mcp's
 * tests use it.
 */
final class McpEverything {
  /** Where the fixture is installed unless {@code box.mcp.cache} says otherwise. */
  static final Path CACHE =
      Path.of(System.getProperty("box.mcp.cache", "/var/tmp/box-test-cache/mcp-everything"));

  private McpEverything() {}

  /**
   * The server's entry point, as {@code scripts/mcp-fixture} prints it (installing the package
   * first when it is missing). Fails when the fixture cannot be had.
   */
  static Path entryPoint() throws IOException, InterruptedException {
    Path script = Path.of(System.getProperty("box.mcp.fixture", "../scripts/mcp-fixture"));
    Process install =
        new ProcessBuilder(List.of(script.toString(), CACHE.toString()))
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
    install.getOutputStream().close();
    String out = new String(install.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!install.waitFor(10, TimeUnit.MINUTES) || install.exitValue() != 0) {
      throw new AssertionError(script + " failed; it printed: " + out);
    }
    Path entry = Path.of(out.strip().lines().reduce((a, b) -> b).orElse(""));
    if (!entry.isAbsolute() || !Files.isRegularFile(entry) || !entry.startsWith(CACHE)) {
      throw new AssertionError(script + " printed no entry point under " + CACHE + ": " + out);
    }
    return entry;
  }
}
