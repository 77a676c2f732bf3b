package dev.box.core.backend;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A stand-in sandbox that runs real processes directly on the host and counts what the core asks of
 * each. It isolates nothing: box-core's own tests cannot use a real backend (the backend modules
 * depend on box-core), and what they check is the core's bookkeeping around a process.
 */
public final class HostSandbox implements Sandbox {
  private final List<HostProcess> spawned = new CopyOnWriteArrayList<>();
  private final Runnable afterSpawn;
  private final AtomicInteger workspaceRemovals = new AtomicInteger();

  /** A sandbox that does nothing but start each process. */
  public HostSandbox() {
    this(() -> {});
  }

  /**
   * A sandbox that runs {@code afterSpawn} once each process has started, as a fake clock's advance
   * stands for the time a slow backend's spawn takes.
   */
  public HostSandbox(Runnable afterSpawn) {
    this.afterSpawn = afterSpawn;
  }

  @Override
  public String id() {
    return "host";
  }

  @Override
  public boolean isAlive() {
    return true;
  }

  /** Runs the command with {@code /bin/sh -c} or as an argument vector; the workdir must exist. */
  @Override
  public SandboxProcess spawn(ProcessSpec spec) {
    List<String> argv =
        switch (spec.command()) {
          case ProcessSpec.Shell shell -> List.of("/bin/sh", "-c", shell.script());
          case ProcessSpec.Argv command -> command.argv();
        };
    ProcessBuilder builder = new ProcessBuilder(argv).directory(new File(spec.workdir()));
    builder.environment().putAll(spec.env());
    if (!spec.stdin()) {
      builder.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
    }
    try {
      HostProcess process = new HostProcess(builder.start());
      spawned.add(process);
      afterSpawn.run();
      return process;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void destroy() {
    spawned.forEach(HostProcess::killTree);
  }

  @Override
  public void removeWorkspace() {
    workspaceRemovals.incrementAndGet();
  }

  /** How many times the core asked to remove the workspace. */
  public int workspaceRemovals() {
    return workspaceRemovals.get();
  }

  /** The processes spawned so far, oldest first. */
  public List<HostProcess> spawned() {
    return List.copyOf(spawned);
  }

  /** A host process that counts the calls to {@link #killTree} and {@link #release}. */
  public static final class HostProcess implements SandboxProcess {
    private final Process process;
    private final AtomicInteger kills = new AtomicInteger();
    private final AtomicInteger releases = new AtomicInteger();

    HostProcess(Process process) {
      this.process = process;
    }

    @Override
    public OutputStream stdin() {
      return process.getOutputStream();
    }

    @Override
    public InputStream stdout() {
      return process.getInputStream();
    }

    @Override
    public InputStream stderr() {
      return process.getErrorStream();
    }

    @Override
    public OptionalInt waitFor(Duration timeout) throws InterruptedException {
      return process.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS)
          ? OptionalInt.of(process.exitValue())
          : OptionalInt.empty();
    }

    @Override
    public CompletableFuture<Integer> onExit() {
      return process.onExit().thenApply(Process::exitValue);
    }

    @Override
    public void terminateTree() {
      process.descendants().forEach(ProcessHandle::destroy);
      process.destroy();
    }

    @Override
    public void killTree() {
      kills.incrementAndGet();
      process.descendants().forEach(ProcessHandle::destroyForcibly);
      process.destroyForcibly();
    }

    @Override
    public void release() {
      releases.incrementAndGet();
    }

    /** Whether the host process still runs. */
    public boolean isAlive() {
      return process.isAlive();
    }

    /** How often {@link #killTree} was called. */
    public int kills() {
      return kills.get();
    }

    /** How often {@link #release} was called. */
    public int releases() {
      return releases.get();
    }
  }
}
