package dev.box.backend.boxlite;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * One execution of {@link FakeBoxlite}: a real process whose stdout and stderr are read into a
 * bounded queue of frames as BoxLite's attach socket carries them ({@code [channel][payload]}, then
 * the exit), so that what the process writes before a client attaches, or between two attaches, is
 * kept; a full queue holds the process back. One client is attached at a time ({@link #claim}).
 */
final class FakeExecution {
  /** A frame for the attach socket: output on a channel, or the exit code (channel 0). */
  record Frame(int channel, byte[] payload, int exitCode) {}

  private static final int CHUNK = 32 * 1024;

  final String id;
  final Process process;
  final Instant startedAt = Instant.now();
  private final BlockingQueue<Frame> frames = new LinkedBlockingQueue<>(256);
  private final AtomicBoolean attached = new AtomicBoolean();
  private volatile @Nullable Integer exitCode;
  private volatile String status = "running";

  FakeExecution(String id, Process process) {
    this.id = id;
    this.process = process;
    Thread out = pump(process.getInputStream(), 1);
    Thread err = pump(process.getErrorStream(), 2);
    Thread.ofVirtual().name("fake-boxlite-wait-" + id).start(() -> awaitExit(out, err));
  }

  private Thread pump(InputStream in, int channel) {
    return Thread.ofVirtual()
        .name("fake-boxlite-" + id + "-" + channel)
        .start(
            () -> {
              byte[] buffer = new byte[CHUNK];
              try (in) {
                for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
                  byte[] payload = new byte[n + 1];
                  payload[0] = (byte) channel;
                  System.arraycopy(buffer, 0, payload, 1, n);
                  frames.put(new Frame(channel, payload, 0));
                }
              } catch (IOException e) {
                // The process is gone.
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            });
  }

  private void awaitExit(Thread out, Thread err) {
    try {
      int code = process.waitFor();
      // A background child may hold the pipes: what was written before the exit is sent.
      out.join(200);
      err.join(200);
      if (exitCode == null) {
        finish(code, code == 128 + 9 ? "killed" : "completed");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Records the end and queues the exit frame once. */
  synchronized void finish(int code, String how) throws InterruptedException {
    if (exitCode == null) {
      exitCode = code;
      status = how;
      frames.put(new Frame(0, new byte[0], code));
    }
  }

  /** Takes the attach for one client; false when another client holds it. */
  boolean claim() {
    return attached.compareAndSet(false, true);
  }

  /** Lets the next client attach. */
  void unclaim() {
    attached.set(false);
  }

  /** The next frame, waiting up to {@code millis}; null when none came. */
  @Nullable Frame next(long millis) throws InterruptedException {
    return frames.poll(millis, TimeUnit.MILLISECONDS);
  }

  /** Appends to the process's stdin. */
  void stdin(byte[] bytes) throws IOException {
    OutputStream in = process.getOutputStream();
    in.write(bytes);
    in.flush();
  }

  /** Closes the process's stdin. */
  void closeStdin() throws IOException {
    process.getOutputStream().close();
  }

  /** Sends {@code signal} to the process and every descendant, as {@code kill -s} does. */
  void signal(int signal) throws IOException, InterruptedException {
    List<String> argv = new ArrayList<>(List.of("kill", "-s", Integer.toString(signal)));
    argv.add(Long.toString(process.pid()));
    process.descendants().forEach(d -> argv.add(Long.toString(d.pid())));
    new ProcessBuilder(argv).redirectErrorStream(true).start().waitFor();
  }

  /** SIGKILL to the process and every descendant, and the exit recorded as killed. */
  void kill() throws InterruptedException {
    process.descendants().forEach(ProcessHandle::destroyForcibly);
    process.destroyForcibly();
    finish(128 + 9, "killed");
  }

  String status() {
    return status;
  }

  @Nullable Integer exitCode() {
    return exitCode;
  }
}
