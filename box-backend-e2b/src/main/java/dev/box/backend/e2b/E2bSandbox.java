package dev.box.backend.e2b;

import dev.box.core.backend.ProcessPrelude;
import dev.box.core.backend.ProcessSpec;
import dev.box.core.backend.SandboxProcess;
import dev.box.core.backend.TaggedTree;
import dev.box.remote.Printable;
import dev.box.remote.RemoteSandbox;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One session's E2B sandbox. Processes start through envd as the template's unprivileged user,
 * behind Box's {@link ProcessPrelude}; the host directories mounted into the session are copied up
 * before each process starts and the read-write ones copied back when it ends ({@link MountSync}),
 * because an E2B sandbox is a remote VM that cannot see the host.
 */
final class E2bSandbox extends RemoteSandbox {
  private static final Logger log = LoggerFactory.getLogger(E2bSandbox.class);
  private static final int HELPER_OUTPUT_BYTES = 1 << 20;

  private static final Kind KIND =
      new Kind(
          "E2B sandbox",
          "the e2b backend gives no terminal: its processes start through E2B's process API, not"
              + " Box's exec agent");

  private final ControlPlane controlPlane;
  private final Envd envd;
  private final MountSync mounts;
  private volatile @Nullable ScheduledFuture<?> refresher;

  E2bSandbox(String id, ControlPlane controlPlane, Envd envd, MountSync.Factory mounts) {
    super(id, KIND);
    this.controlPlane = controlPlane;
    this.envd = envd;
    this.mounts = mounts.create(this);
  }

  /** Keeps the sandbox from expiring while the session lives: {@code task} runs until destroy. */
  void keepAlive(ScheduledFuture<?> task) {
    refresher = task;
  }

  /** Creates the mount points, owned as their mode asks. */
  void prepare() throws IOException {
    mounts.prepare();
  }

  @Override
  protected boolean running() throws IOException {
    return controlPlane.isRunning(id());
  }

  @Override
  protected SandboxProcess start(ProcessSpec spec, String tag) throws IOException {
    mounts.upload();
    Envd.Stream stream =
        envd.start(
            Envd.USER,
            "/bin/sh",
            List.of("-c", ProcessPrelude.SCRIPT, "sh"),
            environment(spec, tag, Map.of("HOME", "/home/" + Envd.USER)),
            "/",
            spec.stdin());
    return E2bProcess.attach(this, envd, stream, tag, spec.stdin());
  }

  /** Copies the read-write mounts back to the host once a process has ended. */
  void afterExit() {
    if (destroyed()) {
      return;
    }
    try {
      mounts.download();
    } catch (IOException | RuntimeException e) {
      log.warn("copying files back from E2B sandbox {} failed: {}", id(), e.toString());
    }
  }

  @Override
  public void signalTree(String tag, String signal) {
    try {
      Helper result = helper(Envd.USER, TaggedTree.SIGNAL_SCRIPT, signalEnvironment(tag, signal));
      if (result.exitCode() != 0) {
        log.warn(
            "signalling a process tree in {} failed (exit {}): {}",
            id(),
            result.exitCode(),
            Printable.excerpt(result.output()));
      }
    } catch (IOException e) {
      log.warn("signalling a process tree in {} failed: {}", id(), e.toString());
    }
  }

  /** What a helper script printed on stdout and stderr, and how it exited. */
  record Helper(int exitCode, byte[] output) {}

  /**
   * Runs a fixed helper {@code script} as {@code user}, its inputs in {@code env}, and collects its
   * output up to a bound; the caller is let go after {@link #HELPER_TIMEOUT}, and the stream
   * closed.
   */
  Helper helper(String user, String script, Map<String, String> env) throws IOException {
    Envd.Stream stream = envd.start(user, "/bin/sh", List.of("-c", script), env, "/", false);
    CompletableFuture<Helper> result = new CompletableFuture<>();
    Thread.ofVirtual()
        .name("e2b-helper-" + id())
        .start(
            () -> {
              try {
                result.complete(collect(stream));
              } catch (IOException | RuntimeException e) {
                result.completeExceptionally(e);
              }
            });
    try {
      return result.get(HELPER_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      closeQuietly(stream);
      throw new IOException(
          "a helper script in E2B sandbox " + id() + " did not end within " + HELPER_TIMEOUT);
    } catch (ExecutionException e) {
      throw e.getCause() instanceof IOException io ? io : new IOException(e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      closeQuietly(stream);
      throw new IOException("interrupted while running a helper script", e);
    }
  }

  private static Helper collect(Envd.Stream stream) throws IOException {
    ByteArrayOutputStream output = new ByteArrayOutputStream();
    int code = 255;
    try (stream) {
      for (ProcessEvent event = stream.next(); event != null; event = stream.next()) {
        if (event instanceof ProcessEvent.Output out) {
          if (output.size() + out.bytes().length > HELPER_OUTPUT_BYTES) {
            throw new IOException("a helper script printed more than " + HELPER_OUTPUT_BYTES);
          }
          output.write(out.bytes());
        } else if (event instanceof ProcessEvent.Ended ended) {
          code = ended.exitCode();
        }
      }
    }
    return new Helper(code, output.toByteArray());
  }

  @Override
  protected void remove() {
    ScheduledFuture<?> task = refresher;
    if (task != null) {
      task.cancel(false);
    }
    try {
      controlPlane.kill(id());
    } catch (IOException e) {
      log.warn("killing E2B sandbox {} failed (it expires by its timeout): {}", id(), e.toString());
    }
  }

  /** Sets the sandbox's timeout again; run periodically while the session lives. */
  void refreshTimeout(Duration timeout) {
    if (destroyed()) {
      return;
    }
    try {
      controlPlane.setTimeout(id(), timeout);
    } catch (IOException e) {
      log.warn("refreshing the timeout of E2B sandbox {} failed: {}", id(), e.toString());
    }
  }

  private static void closeQuietly(Envd.Stream stream) {
    try {
      stream.close();
    } catch (IOException e) {
      // Closing is all the deadline can do.
    }
  }
}
