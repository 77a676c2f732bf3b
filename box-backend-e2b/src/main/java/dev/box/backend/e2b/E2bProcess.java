package dev.box.backend.e2b;

import dev.box.core.backend.PipedProcess;
import java.io.IOException;
import java.io.OutputStream;
import java.util.Arrays;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A process started through envd's {@code process.Process/Start}. One virtual thread reads the
 * stream's events into the stdout and stderr pipes; the end event completes the exit, after the
 * sandbox's read-write mounts have been copied back to the host. The tree is killed inside the
 * sandbox by its environment tag ({@link E2bSandbox#signalTree}), after envd's own {@code
 * SendSignal} to the process.
 */
final class E2bProcess extends PipedProcess {
  private static final Logger log = LoggerFactory.getLogger(E2bProcess.class);

  /** The exit code when the stream breaks before the end event: the sandbox went away. */
  private static final int LOST = 128 + 9;

  private final E2bSandbox sandbox;
  private final Envd envd;
  private final Envd.Stream stream;
  private final int pid;
  private final String tag;
  private final OutputStream stdin;

  private E2bProcess(
      E2bSandbox sandbox, Envd envd, Envd.Stream stream, int pid, String tag, boolean withStdin) {
    super(LOST);
    this.sandbox = sandbox;
    this.envd = envd;
    this.stream = stream;
    this.pid = pid;
    this.tag = tag;
    this.stdin = withStdin ? new Stdin() : closedStdin();
  }

  /**
   * Reads the start event of {@code stream} and starts pumping the rest.
   *
   * @throws IOException when the stream does not begin with the process's start
   */
  static E2bProcess attach(
      E2bSandbox sandbox, Envd envd, Envd.Stream stream, String tag, boolean withStdin)
      throws IOException {
    ProcessEvent first = stream.next();
    while (first instanceof ProcessEvent.Other) {
      first = stream.next();
    }
    if (!(first instanceof ProcessEvent.Started started) || started.pid() <= 0) {
      stream.close();
      throw new IOException("envd's process stream did not begin with the process's start");
    }
    E2bProcess process = new E2bProcess(sandbox, envd, stream, started.pid(), tag, withStdin);
    Thread.ofVirtual().name("e2b-process-" + started.pid()).start(process::pump);
    return process;
  }

  private void pump() {
    int code = LOST;
    try (stream) {
      for (ProcessEvent event = stream.next(); event != null; event = stream.next()) {
        switch (event) {
          case ProcessEvent.Output output ->
              (output.stderr() ? stderr : stdout).offer(output.bytes());
          case ProcessEvent.Ended ended -> code = ended.exitCode();
          case ProcessEvent.Started started -> {}
          case ProcessEvent.Other other -> {}
        }
      }
    } catch (IOException e) {
      log.debug("the process stream of pid {} in {} broke: {}", pid, sandbox.id(), e.toString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      sandbox.afterExit();
      try {
        stdout.finish();
        stderr.finish();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      exit.complete(code);
    }
  }

  @Override
  public OutputStream stdin() {
    return stdin;
  }

  @Override
  public void terminateTree() {
    signal("SIGNAL_SIGTERM");
    sandbox.signalTree(tag, "TERM");
  }

  @Override
  public void killTree() {
    signal("SIGNAL_SIGKILL");
    sandbox.signalTree(tag, "KILL");
  }

  @Override
  public void release() {
    // envd forgets a process when it ends; nothing is kept here.
  }

  private void signal(String signal) {
    if (exit.isDone()) {
      return;
    }
    try {
      envd.sendSignal(pid, signal);
    } catch (IOException e) {
      log.debug("{} to pid {} in {} failed: {}", signal, pid, sandbox.id(), e.toString());
    }
  }

  private static OutputStream closedStdin() {
    OutputStream closed = OutputStream.nullOutputStream();
    try {
      closed.close();
    } catch (IOException e) {
      throw new AssertionError(e);
    }
    return closed;
  }

  /** Writes go to envd's {@code SendInput}, in order, in chunks of at most 64 KiB. */
  private final class Stdin extends OutputStream {
    private static final int CHUNK = 64 * 1024;
    private boolean closed;

    @Override
    public void write(int b) throws IOException {
      write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public synchronized void write(byte[] bytes, int offset, int length) throws IOException {
      if (closed) {
        throw new IOException("stdin is closed");
      }
      for (int at = offset; at < offset + length; at += CHUNK) {
        envd.sendInput(pid, Arrays.copyOfRange(bytes, at, Math.min(offset + length, at + CHUNK)));
      }
    }

    @Override
    public synchronized void close() throws IOException {
      if (!closed) {
        closed = true;
        if (!exit.isDone()) {
          envd.closeStdin(pid);
        }
      }
    }
  }
}
