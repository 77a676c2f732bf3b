package dev.box.image;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/** A host command run to its end, its output (stdout and stderr together) kept in a file. */
record Command(int exitCode, String output) {

  /**
   * Runs {@code argv} in {@code dir} with {@code env} added to this process's environment (a null
   * value removes a variable), killing it after {@code limit}.
   */
  static Command run(List<String> argv, Path dir, Map<String, @Nullable String> env, Duration limit)
      throws IOException, InterruptedException {
    Path log = Files.createTempFile("box-image-command-", ".log");
    try {
      ProcessBuilder builder =
          new ProcessBuilder(argv)
              .directory(dir.toFile())
              .redirectErrorStream(true)
              .redirectOutput(log.toFile())
              .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()));
      env.forEach(
          (name, value) -> {
            if (value == null) {
              builder.environment().remove(name);
            } else {
              builder.environment().put(name, value);
            }
          });
      Process process = builder.start();
      if (!process.waitFor(limit.toSeconds(), TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor();
        throw new AssertionError(
            String.join(" ", argv)
                + " did not end within "
                + limit
                + ":\n"
                + Files.readString(log));
      }
      return new Command(process.exitValue(), Files.readString(log, StandardCharsets.UTF_8));
    } finally {
      Files.deleteIfExists(log);
    }
  }

  /** This result, or an {@link AssertionError} with the output when the command failed. */
  Command ok(List<String> argv) {
    if (exitCode != 0) {
      throw new AssertionError(
          String.join(" ", argv) + " exited with " + exitCode + ":\n" + output);
    }
    return this;
  }
}
