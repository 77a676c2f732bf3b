package dev.box.e2b.server;

import dev.box.core.backend.SandboxProcess;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One watch of a directory in a sandbox: the {@code watch.sh} process that prints the directory's
 * snapshots, read here and turned into events ({@link DirSnapshot}). The first snapshot is the
 * baseline: the watch has started once it came, and every later change is an event. At most {@link
 * #MAX_EVENTS} events wait to be taken; beyond, the oldest are dropped. The watch ends when its
 * process does (the directory is gone, the sandbox ended) or when it is {@linkplain #close closed},
 * which kills the process. Thread-safe.
 */
final class DirWatch implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(DirWatch.class);

  /** The most entries of one snapshot; a larger directory ends the watch. */
  static final int MAX_ENTRIES = 10_000;

  /** The most events waiting to be taken. */
  static final int MAX_EVENTS = 1024;

  /** How long the first snapshot may take. */
  private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

  private static final int MAX_STDERR_BYTES = 4096;

  /** What a watch has next: an event, or its end. */
  sealed interface Next {}

  /** A change in the directory. */
  record Fired(DirSnapshot.Event event) implements Next {}

  /** The watch ended, with {@code error} as the reason unless it was closed. */
  record Ended(@Nullable ConnectError error) implements Next {}

  private final SandboxProcess process;
  private final Runnable onClose;
  private final ArrayDeque<DirSnapshot.Event> queue = new ArrayDeque<>();
  private final CompletableFuture<String> stderr = new CompletableFuture<>();
  private boolean started;
  private boolean closed;
  private @Nullable Ended ended;

  private DirWatch(SandboxProcess process, Runnable onClose) {
    this.process = process;
    this.onClose = onClose;
  }

  /**
   * Watches through {@code process}, a {@code watch.sh} just spawned, once its baseline came;
   * {@code onClose} runs once when it is closed.
   *
   * @throws ConnectError the refusal when the directory cannot be watched ({@code not_found}, ...)
   */
  static DirWatch start(SandboxProcess process, Runnable onClose) throws InterruptedException {
    DirWatch watch = new DirWatch(process, onClose);
    Thread.ofVirtual().name("box-e2b-watch-stderr").start(watch::readStderr);
    Thread.ofVirtual().name("box-e2b-watch").start(watch::readSnapshots);
    try {
      watch.awaitStart();
      return watch;
    } catch (RuntimeException | InterruptedException e) {
      watch.close();
      throw e;
    }
  }

  private synchronized void awaitStart() throws InterruptedException {
    if (!Monitors.await(this, () -> started || ended != null, START_TIMEOUT.toNanos())) {
      throw new ConnectError("deadline_exceeded", "the directory's first snapshot took too long");
    }
    if (!started) {
      ConnectError error = ended == null ? null : ended.error();
      throw error != null ? error : new ConnectError("internal", "the watch ended at its start");
    }
  }

  /** The next event or the end, waiting up to {@code timeoutNanos}; null when none came. */
  synchronized @Nullable Next next(long timeoutNanos) throws InterruptedException {
    if (!Monitors.await(this, () -> !queue.isEmpty() || ended != null, timeoutNanos)) {
      return null;
    }
    DirSnapshot.Event event = queue.poll();
    return event != null ? new Fired(event) : ended;
  }

  /** The events waiting, taken; or, once none wait and the watch ended, its end. */
  synchronized List<DirSnapshot.Event> take() {
    if (queue.isEmpty() && ended != null && ended.error() != null) {
      throw ended.error();
    }
    List<DirSnapshot.Event> events = new ArrayList<>(queue);
    queue.clear();
    return events;
  }

  /** Ends the watch: its process is killed, tree and all. Later calls do nothing. */
  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      notifyAll();
    }
    process.killTree();
    onClose.run();
  }

  private void readSnapshots() {
    ConnectError error = null;
    try (InputStream in = new BufferedInputStream(process.stdout())) {
      DirSnapshot previous = null;
      DirSnapshot next;
      while ((next = DirSnapshot.read(in, MAX_ENTRIES)) != null) {
        if (previous == null) {
          synchronized (this) {
            started = true;
            notifyAll();
          }
        } else {
          add(previous.changesTo(next));
        }
        previous = next;
      }
    } catch (DirSnapshot.TooLarge e) {
      error = new ConnectError("resource_exhausted", String.valueOf(e.getMessage()));
    } catch (IOException e) {
      log.debug("a directory watch ended: {}", e.toString());
    }
    process.killTree();
    finish(error != null ? error : exitError());
    process.release();
  }

  private synchronized void add(List<DirSnapshot.Event> events) {
    for (DirSnapshot.Event event : events) {
      if (queue.size() >= MAX_EVENTS) {
        queue.poll();
      }
      queue.add(event);
    }
    if (!events.isEmpty()) {
      notifyAll();
    }
  }

  private synchronized void finish(@Nullable ConnectError error) {
    ended = new Ended(closed ? null : error);
    notifyAll();
  }

  /** Why the process ended, by its exit code ({@code watch.sh}'s 3 and 5, or another). */
  private @Nullable ConnectError exitError() {
    OptionalInt exit;
    try {
      exit = process.waitFor(Duration.ofSeconds(10));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
    String reason;
    try {
      reason = stderr.get(1, TimeUnit.SECONDS).strip();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    } catch (ExecutionException | TimeoutException e) {
      reason = "";
    }
    int code = exit.orElse(-1);
    return switch (code) {
      case 3 -> ConnectError.notFound(reason);
      case 5 -> ConnectError.invalidArgument(reason);
      default ->
          new ConnectError(
              "unavailable",
              "the watch ended (exit code " + code + ")" + (reason.isEmpty() ? "" : ": " + reason));
    };
  }

  private void readStderr() {
    try (InputStream in = process.stderr()) {
      stderr.complete(new String(in.readNBytes(MAX_STDERR_BYTES), StandardCharsets.UTF_8));
      in.transferTo(OutputStream.nullOutputStream());
    } catch (IOException e) {
      stderr.complete("");
      log.debug("the stderr of a directory watch ended: {}", e.toString());
    }
  }
}
