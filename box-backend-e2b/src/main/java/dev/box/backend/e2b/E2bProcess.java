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
      end(code);
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

  /** Writes go to envd's {@code SendInput}; the end is its {@code CloseStdin}. */
  private final class Stdin extends ChunkedStdin {
    @Override
    protected void sendChunk(byte[] bytes, int offset, int length) throws IOException {
      envd.sendInput(pid, Arrays.copyOfRange(bytes, offset, offset + length));
    }

    @Override
    protected void sendEnd() throws IOException {
      envd.closeStdin(pid);
    }
  }
}
