package dev.box.testkit;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Host commands of the test harness ({@code ip}, {@code nft}, perl), run with the sbin directories
 * on PATH whatever the caller's. Every wait has a deadline.
 */
final class HarnessCommand {
  private static final String PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

  private HarnessCommand() {}

  /** What a finished command printed (stdout and stderr together) and how it exited. */
  record Result(int exitCode, String output) {}

  /** Runs {@code command}, feeding it {@code input}, and returns its output; throws unless 0. */
  static String run(List<String> command, String input) {
    Result result = attempt(command, input);
    if (result.exitCode() != 0) {
      throw new IllegalStateException(
          shown(command) + " exited " + result.exitCode() + ": " + result.output());
    }
    return result.output();
  }

  static String run(String... command) {
    return run(List.of(command), "");
  }

  /** Runs {@code ip} with {@code args} and returns its output; throws unless it exits 0. */
  static String ip(String... args) {
    List<String> command = new ArrayList<>(List.of("ip"));
    command.addAll(List.of(args));
    return run(command, "");
  }

  /** Runs {@code command} and returns how it exited, whatever the exit code. */
  static Result attempt(List<String> command, String input) {
    Process process;
    try {
      process = builder(command).redirectErrorStream(true).start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot run " + shown(command), e);
    }
    CompletableFuture<String> output =
        CompletableFuture.supplyAsync(() -> readAll(process), Thread::startVirtualThread);
    try {
      try (OutputStream stdin = process.getOutputStream()) {
        stdin.write(input.getBytes(StandardCharsets.UTF_8));
      }
      if (!process.waitFor(60, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        throw new IllegalStateException(shown(command) + " did not finish in 60 s");
      }
      return new Result(process.exitValue(), output.get(10, TimeUnit.SECONDS));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot feed " + shown(command), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while running " + shown(command), e);
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException("cannot read the output of " + shown(command), e);
    }
  }

  /**
   * Starts {@code command} as a daemon that prints one line once it is ready, and returns it with
   * that line; its stdin stays open (the harness's daemons exit when it ends). Throws with what it
   * printed when it exits first, or when it prints nothing for 20 s.
   */
  static Daemon startDaemon(List<String> command) {
    Process process;
    try {
      process = builder(command).redirectErrorStream(true).start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start " + shown(command), e);
    }
    try {
      return new Daemon(process, firstLine(process, 20));
    } catch (Exception e) {
      process.destroyForcibly();
      throw new IllegalStateException("cannot start " + shown(command), e);
    }
  }

  /** A started daemon and the first line it printed. */
  record Daemon(Process process, String firstLine) {
    /** Closes its stdin, which ends it, and kills it if it is still there after 5 s. */
    void stop() {
      try {
        process.getOutputStream().close();
        if (!process.waitFor(5, TimeUnit.SECONDS)) {
          process.destroyForcibly();
          process.waitFor(10, TimeUnit.SECONDS);
        }
      } catch (IOException e) {
        process.destroyForcibly();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        process.destroyForcibly();
      }
    }
  }

  /**
   * The first line {@code process} prints, empty when it ends first; waits at most {@code seconds},
   * and throws when that is not enough.
   */
  static String firstLine(Process process, int seconds) throws Exception {
    BufferedReader out =
        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    return CompletableFuture.supplyAsync(
            () -> {
              try {
                String first = out.readLine();
                return first == null ? "" : first;
              } catch (IOException e) {
                throw new UncheckedIOException(e);
              }
            },
            Thread::startVirtualThread)
        .get(seconds, TimeUnit.SECONDS);
  }

  /** The command as one line, each long argument (a perl script) cut short. */
  private static String shown(List<String> command) {
    return String.join(
        " ", command.stream().map(a -> a.length() > 60 ? a.substring(0, 40) + "..." : a).toList());
  }

  private static ProcessBuilder builder(List<String> command) {
    ProcessBuilder builder = new ProcessBuilder(command);
    builder.environment().put("PATH", PATH);
    return builder;
  }

  private static String readAll(Process process) {
    try {
      return new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
