package dev.box.core.process;

import dev.box.api.BoxManagedProcessInfo;
import dev.box.api.BoxManagedProcessSpec;
import dev.box.api.BoxManagedProcessStatus;
import dev.box.api.time.Ticker;
import dev.box.core.backend.ProcessSpec;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxProcess;
import java.io.IOException;
import java.io.InputStream;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One long-running process in a session: its stdout is read continuously into a {@link
 * StdoutBuffer}, its stderr into a preview, its exit is recorded, and one relay at a time may
 * attach to its stdio.
 */
public final class ManagedProcess {
  private static final Logger log = LoggerFactory.getLogger(ManagedProcess.class);
  private static final Duration STOP_GRACE = Duration.ofSeconds(5);
  private static final Duration KILL_WAIT = Duration.ofSeconds(5);

  private final String sessionId;
  private final BoxManagedProcessSpec spec;
  private final SandboxProcess process;
  private final Instant startedAt;
  private final StdoutBuffer stdout;
  private final StderrPreview stderr;
  private final Semaphore attachment = new Semaphore(1, true);
  private final CompletableFuture<Integer> exit = new CompletableFuture<>();
  private volatile @Nullable Instant exitedAt;
  private final ProcessStdin stdin;
  private volatile boolean detached;

  /** Relays {@code process}; its output is not read yet. */
  private ManagedProcess(
      String sessionId,
      BoxManagedProcessSpec spec,
      SandboxProcess process,
      Instant startedAt,
      int bufferBytes,
      Ticker ticker) {
    this.sessionId = sessionId;
    this.spec = spec;
    this.process = process;
    this.startedAt = startedAt;
    this.stdin = new ProcessStdin(process.stdin());
    this.stdout = new StdoutBuffer(bufferBytes, process.stdoutOffset(), ticker);
    this.stderr = new StderrPreview(log, sessionId + "/" + spec.processId(), ticker);
  }

  private static ProcessSpec processSpec(BoxManagedProcessSpec spec) {
    List<String> argv = new ArrayList<>();
    argv.add(spec.command());
    argv.addAll(spec.args());
    return new ProcessSpec(
        new ProcessSpec.Argv(argv), spec.cwd(), spec.env(), true, spec.memoryMb());
  }

  /**
   * Starts {@code spec} in {@code sandbox}.
   *
   * @param clock stamps the start and the exit
   * @param ticker times the reads of its output and the warnings about its stderr
   * @param onExit called once, after the exit was recorded
   */
  public static ManagedProcess start(
      String sessionId,
      BoxManagedProcessSpec spec,
      Sandbox sandbox,
      int bufferBytes,
      Clock clock,
      Ticker ticker,
      Consumer<ManagedProcess> onExit) {
    SandboxProcess process = sandbox.spawnHeld(processSpec(spec));
    return new ManagedProcess(sessionId, spec, process, clock.instant(), bufferBytes, ticker)
        .relay(clock, onExit);
  }

  /**
   * Relays {@code process}, which another server started as {@code spec} at {@code startedAt} and
   * this one {@linkplain Sandbox#reattach reattached}: its stdout offsets go on from where that
   * server's relay ended.
   *
   * @param clock stamps the exit
   * @param ticker times the reads of its output and the warnings about its stderr
   * @param onExit called once, after the exit was recorded
   */
  public static ManagedProcess adopt(
      String sessionId,
      BoxManagedProcessSpec spec,
      SandboxProcess process,
      Instant startedAt,
      int bufferBytes,
      Clock clock,
      Ticker ticker,
      Consumer<ManagedProcess> onExit) {
    return new ManagedProcess(sessionId, spec, process, startedAt, bufferBytes, ticker)
        .relay(clock, onExit);
  }

  private ManagedProcess relay(Clock clock, Consumer<ManagedProcess> onExit) {
    pump("stdout", process.stdout(), this::onStdout, stdout::close);
    pump("stderr", process.stderr(), stderr::append, () -> {});
    process
        .onExit()
        .whenComplete(
            (code, failure) -> {
              if (detached) {
                // Another server relays it now: its exit is that server's to report.
                return;
              }
              exitedAt = clock.instant();
              int exitCode = code == null ? -1 : code;
              log.info(
                  "managed process exited session_id={} process_id={} return_code={}",
                  sessionId,
                  spec.processId(),
                  exitCode);
              process.release();
              // Before the exit completes: whoever waits for it (a replacing start) must find
              // the process no longer counted as running.
              onExit.accept(this);
              exit.complete(exitCode);
            });
    return this;
  }

  /**
   * What another server reattaches to this process with, once this one lets go of it ({@link
   * #detach}), or null when it cannot outlive this server.
   */
  public @Nullable String handle() {
    return process.handle();
  }

  /**
   * Lets go of the process without stopping it, for another server to reattach by its {@link
   * #handle}: this server's side of its stdio closes, and its exit is no longer recorded here.
   */
  public void detach() {
    detached = true;
    process.detach();
  }

  private interface Sink {
    void accept(byte[] bytes, int length) throws InterruptedException;
  }

  private void onStdout(byte[] bytes, int length) throws InterruptedException {
    stdout.write(bytes, 0, length);
  }

  /** Reads a stream on a platform thread: a blocking pipe read would pin a virtual thread. */
  private void pump(String stream, InputStream in, Sink sink, Runnable atEnd) {
    Thread.ofPlatform()
        .daemon()
        .name("box-process-" + stream)
        .start(
            () -> {
              byte[] buffer = new byte[64 * 1024];
              try (in) {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                  sink.accept(buffer, n);
                }
              } catch (IOException e) {
                log.debug("{} of {} ended: {}", stream, spec.processId(), e.toString());
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              } finally {
                atEnd.run();
              }
            });
  }

  /** The session it runs in. */
  public String sessionId() {
    return sessionId;
  }

  /** Its spec. */
  public BoxManagedProcessSpec spec() {
    return spec;
  }

  /** Whether it still runs. */
  public boolean isRunning() {
    return !exit.isDone();
  }

  /** Completes with the exit code. */
  public CompletableFuture<Integer> exit() {
    return exit;
  }

  /** When it exited, or null. */
  public @Nullable Instant exitedAt() {
    return exitedAt;
  }

  /** Its stdout. */
  public StdoutBuffer stdout() {
    return stdout;
  }

  /**
   * Waits until no other relay is attached, then attaches; the returned handle detaches.
   *
   * @return null when {@code timeout} passed first
   */
  public @Nullable Attachment attach(Duration timeout) throws InterruptedException {
    if (!attachment.tryAcquire(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
      return null;
    }
    return attachment::release;
  }

  /** An attachment to the process's stdio; closing it lets the next relay attach. */
  public interface Attachment extends AutoCloseable {
    @Override
    void close();
  }

  /** Writes to the process's stdin; ignored once stdin is closed or the process has exited. */
  public void writeStdin(byte[] bytes) throws IOException {
    stdin.write(bytes);
  }

  /** Closes the process's stdin: it reads end-of-file. */
  public void closeStdin() {
    stdin.close();
  }

  /**
   * Stops the process and everything it started: stdin closed, SIGTERM to the tree, 5 s of grace,
   * then SIGKILL. Returns once it has exited, or at once after the SIGKILL when the calling thread
   * is interrupted: the interrupt stays set for the caller.
   */
  public void stop() {
    closeStdin();
    if (isRunning()) {
      process.terminateTree();
      if (!awaitExit(STOP_GRACE) && !Thread.currentThread().isInterrupted()) {
        log.info("managed process {} ignored SIGTERM for 5 s: SIGKILL", spec.processId());
      }
    }
    // SIGKILL what is left even after the main process exited: daemonised children.
    process.killTree();
    if (Thread.currentThread().isInterrupted()) {
      log.info("stopping managed process {} was interrupted: SIGKILL sent", spec.processId());
    } else if (!awaitExit(KILL_WAIT)) {
      log.warn("managed process {} did not exit after SIGKILL", spec.processId());
    }
    process.release();
  }

  /**
   * Waits up to {@code timeout} for the exit. An interrupt ends the wait early and is kept set, so
   * that {@link #stop} still kills the tree and its caller still sees the interrupt.
   */
  private boolean awaitExit(Duration timeout) {
    try {
      exit.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
      return true;
    } catch (TimeoutException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return exit.isDone();
    } catch (ExecutionException e) {
      // Only ever completed with a code; whatever completed it, the wait is over.
      return true;
    }
  }

  /** The process as the API reports it. */
  public BoxManagedProcessInfo info() {
    Integer code = exit.isDone() ? exit.getNow(-1) : null;
    return new BoxManagedProcessInfo(
        sessionId,
        spec.processId(),
        isRunning() ? BoxManagedProcessStatus.RUNNING : BoxManagedProcessStatus.EXITED,
        spec.command(),
        spec.args(),
        spec.cwd(),
        spec.env().keySet().stream().sorted().toList(),
        attachment.availablePermits() == 0,
        startedAt,
        exitedAt,
        code,
        stderr.text(),
        stdout.end(),
        stdout.delivered());
  }
}
