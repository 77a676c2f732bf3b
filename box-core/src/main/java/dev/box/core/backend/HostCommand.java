package dev.box.core.backend;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs a short host command that backends need while setting a sandbox up (nft, nsenter, ...), with
 * a clean environment, a deadline and its output kept for the error message. The argument vector
 * holds fixed words, paths and numbers; anything else goes through standard input.
 */
public final class HostCommand {
  /** Where host programs are looked for: system directories only, never the caller's PATH. */
  private static final List<Path> SEARCH_PATH =
      java.util.stream.Stream.of("/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin")
          .map(Path::of)
          .toList();

  private HostCommand() {}

  /** The executable {@code program} in the system directories, or null when there is none. */
  public static @org.jspecify.annotations.Nullable Path find(String program) {
    for (Path dir : SEARCH_PATH) {
      Path candidate = dir.resolve(program);
      if (java.nio.file.Files.isExecutable(candidate)) {
        return candidate;
      }
    }
    return null;
  }

  /**
   * Runs {@code argv} with {@code input} on its standard input and waits for it.
   *
   * @throws IOException when it cannot start, outlives {@code timeout} (it is then killed) or exits
   *     non-zero; the message holds its first line of output
   */
  public static void run(List<String> argv, String input, Duration timeout) throws IOException {
    ProcessBuilder builder = new ProcessBuilder(argv).redirectErrorStream(true);
    builder.environment().clear();
    builder.environment().put("PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
    builder.directory(Path.of("/").toFile());
    Process process = builder.start();
    try {
      try (OutputStream in = process.getOutputStream()) {
        in.write(input.getBytes(StandardCharsets.UTF_8));
      } catch (IOException e) {
        // It ended before reading its input: its exit code and output say why.
      }
      byte[] output = process.getInputStream().readNBytes(4096);
      if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        throw new IOException(
            Path.of(argv.get(0)).getFileName()
                + " did not finish within "
                + timeout.toSeconds()
                + " s");
      }
      if (process.exitValue() != 0) {
        String text = new String(output, StandardCharsets.UTF_8).strip().replaceAll("\\s+", " ");
        throw new IOException(
            Path.of(argv.get(0)).getFileName()
                + " exited with "
                + process.exitValue()
                + (text.isEmpty() ? "" : ": " + text.substring(0, Math.min(300, text.length()))));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while running " + argv.get(0), e);
    } finally {
      process.destroyForcibly();
    }
  }
}
