package dev.box.e2b.server;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.box.core.backend.ProcessSpec;
import dev.box.core.backend.SandboxProcess;
import dev.box.core.process.ProcessStdin;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One process of envd's process service: its output read as it comes and passed to every stream
 * that watches it ({@link ProcessWatcher}; output nobody watches is dropped, as envd replays
 * nothing), its stdin, its signals, and its end, told to every watcher once the process exited and
 * its output was read. Output that a background child writes into an inherited stream after the
 * process exited is not waited for.
 */
final class E2bProcess {
  private static final Logger log = LoggerFactory.getLogger(E2bProcess.class);

  /** How long the end waits for the last output of a process whose streams a child still holds. */
  private static final Duration DRAIN_GRACE = Duration.ofMillis(200);

  private static final int READ_BYTES = 32 * 1024;

  private final int pid;
  private final ProcessConfig config;
  private final SandboxProcess process;
  private final ProcessStdin stdin;
  private final ObjectMapper mapper;
  private final Set<ProcessWatcher> watchers = ConcurrentHashMap.newKeySet();
  private final CompletableFuture<Void> stdoutRead = new CompletableFuture<>();
  private final CompletableFuture<Void> stderrRead = new CompletableFuture<>();
  private volatile boolean delivering;
  private volatile @Nullable String killedBy;
  private volatile boolean expired;
  private volatile int exitCode = -1;
  private boolean ended;
  private @Nullable ScheduledFuture<?> deadline;

  private E2bProcess(int pid, ProcessConfig config, SandboxProcess process, ObjectMapper mapper) {
    this.pid = pid;
    this.config = config;
    this.process = process;
    this.stdin = new ProcessStdin(process.stdin());
    this.mapper = mapper;
  }

  /**
   * Relays {@code process}, just spawned as {@code config}: {@code first} watches it from its first
   * byte; {@code onEnd} runs once its end was told.
   */
  static E2bProcess relay(
      int pid,
      ProcessConfig config,
      SandboxProcess process,
      ObjectMapper mapper,
      ProcessWatcher first,
      Consumer<E2bProcess> onEnd) {
    E2bProcess relayed = new E2bProcess(pid, config, process, mapper);
    relayed.watchers.add(first);
    // On a PTY the terminal's output is all on stdout, and envd sends it as pty data.
    relayed.pump(config.pty() != null ? "pty" : "stdout", process.stdout(), relayed.stdoutRead);
    relayed.pump("stderr", process.stderr(), relayed.stderrRead);
    process
        .onExit()
        .whenComplete(
            (code, failure) ->
                Thread.ofVirtual()
                    .name("box-e2b-end-" + pid)
                    .start(() -> relayed.end(code == null ? -1 : code, onEnd)));
    return relayed;
  }

  int pid() {
    return pid;
  }

  ProcessConfig config() {
    return config;
  }

  /** Adds {@code watcher}; false when the process has ended already. */
  synchronized boolean watch(ProcessWatcher watcher) {
    if (ended) {
      return false;
    }
    watchers.add(watcher);
    return true;
  }

  /** Its exit code once it ended, -1 before. */
  int exitCode() {
    return exitCode;
  }

  /** Why Box killed it ({@code signal: killed}, {@code context deadline exceeded}), or null. */
  @Nullable String killedBy() {
    return killedBy;
  }

  /** Whether its end was told. */
  synchronized boolean ended() {
    return ended;
  }

  /** Has it {@linkplain #expire expire} after {@code timeout} unless it ends first. */
  void expireAfter(ScheduledExecutorService timer, Duration timeout) {
    ScheduledFuture<?> armed =
        timer.schedule(this::expire, timeout.toNanos(), TimeUnit.NANOSECONDS);
    synchronized (this) {
      if (ended) {
        armed.cancel(false);
      } else {
        deadline = armed;
      }
    }
  }

  void unwatch(ProcessWatcher watcher) {
    watchers.remove(watcher);
    watcher.close();
  }

  /**
   * Writes {@code bytes} to its stdin.
   *
   * @throws ConnectError {@code failed_precondition} when it has no stdin, or it was closed
   */
  void writeStdin(byte[] bytes) {
    try {
      if (!stdin().write(bytes)) {
        throw new ConnectError("failed_precondition", "the stdin of process " + pid + " is closed");
      }
    } catch (IOException e) {
      throw new ConnectError(
          "failed_precondition", "process " + pid + " does not read its stdin any more");
    }
  }

  /**
   * Writes {@code bytes} to its PTY, as typed.
   *
   * @throws ConnectError {@code failed_precondition} when it runs on no PTY, or it ended
   */
  void writePty(byte[] bytes) {
    requirePty();
    writeStdin(bytes);
  }

  /**
   * Resizes its PTY.
   *
   * @throws ConnectError {@code failed_precondition} when it runs on no PTY
   */
  void resize(ProcessSpec.Terminal size) {
    requirePty();
    process.resize(size);
  }

  private void requirePty() {
    if (config.pty() == null) {
      throw new ConnectError(
          "failed_precondition", "process " + pid + " runs on no PTY (it was started without one)");
    }
  }

  /** Closes its stdin: it reads end-of-file. */
  void closeStdin() {
    stdin().close();
  }

  private ProcessStdin stdin() {
    if (!config.stdin()) {
      throw new ConnectError(
          "failed_precondition", "process " + pid + " was started without stdin (stdin: false)");
    }
    return stdin;
  }

  /** Kills it and everything it started ({@code kill}), or asks them to end (SIGTERM). */
  void signal(boolean kill) {
    if (kill) {
      killedBy = "signal: killed";
      process.killTree();
    } else {
      process.terminateTree();
    }
  }

  /** Its time ran out: it is killed, tree and all, and its streams end with the reason. */
  private void expire() {
    expired = true;
    killedBy = "context deadline exceeded";
    process.killTree();
  }

  private void pump(String stream, InputStream in, CompletableFuture<Void> read) {
    Thread.ofPlatform()
        .daemon()
        .name("box-e2b-" + stream)
        .start(
            () -> {
              byte[] buffer = new byte[READ_BYTES];
              try (in) {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                  if (n > 0) {
                    deliver(ProcessEvents.data(mapper, stream, Arrays.copyOf(buffer, n)));
                  }
                }
              } catch (IOException e) {
                log.debug("{} of E2B process {} ended: {}", stream, pid, e.toString());
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              } finally {
                read.complete(null);
              }
            });
  }

  private void deliver(ObjectNode event) throws InterruptedException {
    delivering = true;
    try {
      for (ProcessWatcher watcher : watchers) {
        watcher.deliver(event);
      }
    } finally {
      delivering = false;
    }
  }

  /**
   * Tells every watcher the end, once the output is read: all of it, or what came until it stopped
   * coming while a child holds a stream (a watcher still taking output is waited for).
   */
  private void end(int exitCode, Consumer<E2bProcess> onEnd) {
    CompletableFuture<Void> read = CompletableFuture.allOf(stdoutRead, stderrRead);
    try {
      while (true) {
        try {
          read.get(DRAIN_GRACE.toNanos(), TimeUnit.NANOSECONDS);
          break;
        } catch (TimeoutException e) {
          if (!delivering) {
            break;
          }
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException e) {
      // Only ever completed normally.
    }
    String reason = killedBy;
    ProcessWatcher.Ended end =
        new ProcessWatcher.Ended(
            ProcessEvents.end(mapper, exitCode, reason),
            expired
                ? new ConnectError(
                    "deadline_exceeded",
                    "process " + pid + " ran out of time (Connect-Timeout-Ms): it was killed")
                : null);
    this.exitCode = exitCode;
    synchronized (this) {
      ended = true;
      if (deadline != null) {
        deadline.cancel(false);
      }
    }
    watchers.forEach(w -> w.finish(end));
    watchers.clear();
    process.release();
    onEnd.accept(this);
  }
}
