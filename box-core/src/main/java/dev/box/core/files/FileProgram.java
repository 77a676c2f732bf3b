package dev.box.core.files;

import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.BoxRuntimeUnavailableException;
import dev.box.core.backend.ProcessSpec;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxProcess;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One file program running in a sandbox: its process, and the first bytes of its stderr read by a
 * pump so that a program that writes much there never blocks.
 */
final class FileProgram {
  /** How long a program may take to exit once its input or output is done. */
  static final Duration EXIT_WAIT = Duration.ofMinutes(5);

  private static final Duration STDERR_WAIT = Duration.ofSeconds(2);
  private static final int STDERR_KEPT = 8 * 1024;
  private static final int MAX_SIZE_LINE = 24;

  private final SandboxProcess process;
  private final CompletableFuture<String> stderr;
  private boolean released;

  private FileProgram(SandboxProcess process, CompletableFuture<String> stderr) {
    this.process = process;
    this.stderr = stderr;
  }

  /** Spawns {@code script} in {@code sandbox} at {@code /} with {@code env}. */
  static FileProgram start(
      Sandbox sandbox, String script, Map<String, String> env, boolean stdin, Executor pumps) {
    SandboxProcess process =
        sandbox.spawn(new ProcessSpec(new ProcessSpec.Shell(script), "/", env, stdin));
    CompletableFuture<String> stderr =
        CompletableFuture.supplyAsync(() -> keepHead(process.stderr()), pumps);
    return new FileProgram(process, stderr);
  }

  SandboxProcess process() {
    return process;
  }

  /**
   * Reads the size line the program prints before its content; when it prints none, its failure.
   */
  long sizeLine(String what) throws IOException {
    InputStream stdout = process.stdout();
    StringBuilder line = new StringBuilder();
    int c;
    while ((c = stdout.read()) >= 0 && c != '\n') {
      if (line.length() >= MAX_SIZE_LINE) {
        throw new BoxException(
            BoxErrorCode.INTERNAL_ERROR, what + ": the sandbox answered no size");
      }
      line.append((char) c);
    }
    if (c < 0) {
      kill();
      throw failure(what);
    }
    try {
      return Long.parseLong(line.toString().strip());
    } catch (NumberFormatException e) {
      throw new BoxException(BoxErrorCode.INTERNAL_ERROR, what + ": the sandbox answered no size");
    }
  }

  /** Waits for the exit code; a program that does not exit in time is killed. */
  int exitCode(String what) {
    try {
      OptionalInt exit = process.waitFor(EXIT_WAIT);
      if (exit.isEmpty()) {
        process.killTree();
        throw new BoxRuntimeUnavailableException(
            what + " did not finish within " + EXIT_WAIT.toMinutes() + " minutes");
      }
      return exit.getAsInt();
    } catch (InterruptedException e) {
      process.killTree();
      throw SandboxFiles.interrupted(what);
    }
  }

  /** Waits for the program and throws its failure unless it exited 0. */
  void finish(String what) {
    if (exitCode(what) != 0) {
      throw failure(what);
    }
  }

  /** The error the program's exit code and stderr describe; waits for it to exit. */
  BoxException failure(String what) {
    int exit = exitCode(what);
    String err;
    try {
      err = stderr.get(STDERR_WAIT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException | TimeoutException e) {
      err = "";
    } catch (InterruptedException e) {
      throw SandboxFiles.interrupted(what);
    }
    return FileFailures.of(what, exit, err);
  }

  /** Kills the program and what it started, unless it has exited. */
  void kill() {
    if (!process.onExit().isDone()) {
      process.killTree();
    }
  }

  /** Releases the backend's bookkeeping once; call after {@link #kill()}. */
  void release() {
    if (!released) {
      released = true;
      process.release();
    }
  }

  private static String keepHead(InputStream stream) {
    ByteArrayOutputStream kept = new ByteArrayOutputStream();
    byte[] buffer = new byte[4096];
    try (stream) {
      int n;
      while ((n = stream.read(buffer)) >= 0) {
        int room = STDERR_KEPT - kept.size();
        if (room > 0) {
          kept.write(buffer, 0, Math.min(room, n));
        }
      }
    } catch (IOException e) {
      // The stream ended with the process: what was read is what there is.
    }
    return kept.toString(StandardCharsets.UTF_8);
  }
}
