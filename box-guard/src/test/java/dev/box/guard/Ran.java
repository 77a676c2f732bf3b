package dev.box.guard;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** A finished host process: its exit status and its output. */
record Ran(int exit, String stdout, String stderr) {
  private static final String PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

  /**
   * Runs {@code command} with a plain PATH and no input, and waits at most two minutes. Its output
   * goes to files, so that nothing has to drain a pipe while it runs.
   */
  static Ran run(List<String> command) throws IOException, InterruptedException {
    Path out = Files.createTempFile("ran", ".out");
    Path err = Files.createTempFile("ran", ".err");
    try {
      ProcessBuilder builder =
          new ProcessBuilder(command)
              .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
              .redirectOutput(out.toFile())
              .redirectError(err.toFile());
      builder.environment().put("PATH", PATH);
      Process process = builder.start();
      if (!process.waitFor(120, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        throw new AssertionError(command + " did not end within two minutes");
      }
      return new Ran(process.exitValue(), Files.readString(out), Files.readString(err));
    } finally {
      Files.delete(out);
      Files.delete(err);
    }
  }
}
