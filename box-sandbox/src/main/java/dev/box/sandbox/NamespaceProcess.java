package dev.box.sandbox;

import dev.box.core.backend.SandboxProcess;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Duration;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;

/**
 * A process spawned into a namespace sandbox (bubblewrap's, nsjail's) through the {@link Launcher}
 * and nsenter.
 *
 * <p>Its stdout and stderr are read through file descriptors of our own, opened on the pipes via
 * /proc before the process is released to run. The JDK closes its ends of a child's pipes when the
 * child exits; ours stay open, so a background process that the command left running can keep
 * writing (its output is drained) instead of dying of SIGPIPE.
 *
 * @param launcher the launcher process, whose exit is the process's
 * @param group the cgroup of the process's tree
 * @param stdout our own end of the process's stdout
 * @param stderr our own end of the process's stderr
 * @param stdin the process's stdin
 */
record NamespaceProcess(
    Process launcher,
    CgroupDriver.ProcessCgroup group,
    InputStream stdout,
    InputStream stderr,
    OutputStream stdin)
    implements SandboxProcess {

  /**
   * Takes over the streams of a launcher that waits for its go line, then releases it.
   *
   * @param keepStdin whether the caller writes to stdin after the go line
   */
  static NamespaceProcess release(
      Process launcher, CgroupDriver.ProcessCgroup group, boolean keepStdin) throws IOException {
    InputStream out = ownEnd(launcher, 1, launcher.getInputStream());
    InputStream err = ownEnd(launcher, 2, launcher.getErrorStream());
    OutputStream in = launcher.getOutputStream();
    try {
      in.write('\n');
      in.flush();
    } catch (IOException e) {
      // The launcher died before its gate; its exit code and stderr tell why.
    }
    if (!keepStdin) {
      closeQuietly(in);
    }
    return new NamespaceProcess(launcher, group, out, err, in);
  }

  private static InputStream ownEnd(Process process, int fd, InputStream jdkEnd) {
    try {
      InputStream own = new FileInputStream("/proc/" + process.pid() + "/fd/" + fd);
      closeQuietly(jdkEnd);
      return own;
    } catch (IOException e) {
      // The launcher is gone already: what it wrote is in the JDK's end.
      return jdkEnd;
    }
  }

  /** Closes {@code closeable}, which may be gone already. */
  static void closeQuietly(AutoCloseable closeable) {
    try {
      closeable.close();
    } catch (Exception e) {
      // Nothing to do: the stream is gone either way.
    }
  }

  @Override
  public OptionalInt waitFor(Duration timeout) throws InterruptedException {
    if (launcher.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
      return OptionalInt.of(launcher.exitValue());
    }
    return OptionalInt.empty();
  }

  @Override
  public java.util.concurrent.CompletableFuture<Integer> onExit() {
    return launcher.onExit().thenApply(Process::exitValue);
  }

  @Override
  public void terminateTree() {
    group.terminate(launcher.pid());
    launcher.descendants().forEach(ProcessHandle::destroy);
  }

  @Override
  public void killTree() {
    group.kill();
    // Backstop for hosts without cgroups: the launcher and what the host can still see of it.
    launcher.descendants().forEach(ProcessHandle::destroyForcibly);
    launcher.destroyForcibly();
  }

  @Override
  public void release() {
    group.releaseIfEmpty();
  }
}
