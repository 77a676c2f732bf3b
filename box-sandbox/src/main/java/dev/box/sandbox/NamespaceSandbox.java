package dev.box.sandbox;

import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.core.backend.ProcessSpec;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxGoneException;
import dev.box.core.backend.SandboxProcess;
import dev.box.core.backend.SandboxUsage;
import dev.box.guard.ExecAgent;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One live namespace sandbox (bubblewrap's, or nsjail's): the process that made it, the pid of the
 * sandbox's init (which nsenter targets, a child of that process), the sandbox's cgroups and, with
 * the network on, its slirp4netns.
 *
 * @param name the sandbox's name, its id
 * @param jail the process that made the sandbox (bwrap, nsjail); its exit ends the sandbox
 * @param initPid the pid of the sandbox's init
 * @param cgroup the sandbox's cgroups
 * @param launcher starts processes inside
 * @param network the sandbox's slirp4netns, or null with the network off
 * @param agent the sandbox's exec agent, or null when processes start through {@code launcher}
 * @param destroyed whether {@link #destroy} has run: false for a new sandbox
 */
public record NamespaceSandbox(
    String name,
    Process jail,
    long initPid,
    CgroupDriver.SessionCgroup cgroup,
    Launcher launcher,
    @Nullable Process network,
    @Nullable AgentRoute agent,
    AtomicBoolean destroyed)
    implements Sandbox {
  private static final Logger log = LoggerFactory.getLogger(NamespaceSandbox.class);

  @Override
  public String id() {
    return name;
  }

  @Override
  public boolean isAlive() {
    return !destroyed.get() && jail.isAlive();
  }

  @Override
  public SandboxProcess spawn(ProcessSpec spec) {
    if (!isAlive()) {
      // It ended between the session's check and now (killed from outside): nothing ran yet.
      throw new SandboxGoneException("sandbox " + name + " is not running");
    }
    if (agent == null) {
      spec.refuseTerminal(
          "this backend gives no terminal here: its processes start through nsenter, as Box's"
              + " exec agent is unavailable (no cgroups, or no agent for this host)");
    }
    CgroupDriver.ProcessCgroup group = cgroup.createProcessGroup(spec.memoryMb());
    if (agent != null) {
      try {
        return agent.spawn(spec, group);
      } catch (RuntimeException e) {
        group.releaseIfEmpty();
        throw e;
      }
    }
    try {
      Process process = launcher.start(initPid, group, spec);
      return NamespaceProcess.release(process, group, spec.stdin());
    } catch (IOException | RuntimeException e) {
      group.releaseIfEmpty();
      throw new BoxException(
          BoxErrorCode.INTERNAL_ERROR, "cannot spawn a process in sandbox " + name + ": " + e, e);
    }
  }

  /** Freezes every process of the sandbox, its exec agent included, through its cgroup. */
  @Override
  public void pause() {
    onCgroup("pause", cgroup::freeze);
  }

  @Override
  public void resume() {
    onCgroup("resume", cgroup::thaw);
  }

  /**
   * Runs {@code step} on the sandbox's cgroup, its failure an internal error that says {@code
   * what}.
   */
  private void onCgroup(String what, Runnable step) {
    try {
      step.run();
    } catch (IllegalStateException e) {
      String message = "cannot " + what + " sandbox " + name + ": " + e.getMessage();
      throw new BoxException(BoxErrorCode.INTERNAL_ERROR, message, e);
    }
  }

  /** The counters of the sandbox's cgroups; nothing where it has none. */
  @Override
  public SandboxUsage usage() {
    return cgroup.usage();
  }

  /** The mounted exec agent's pipe; none when processes start through the launcher. */
  @Override
  public @Nullable List<String> portPipe(int port) {
    return agent == null ? null : ExecAgent.pipeCommand(ExecAgent.SANDBOX_PATH, port);
  }

  /**
   * Kills the sandbox and removes its cgroups. A second call, also one made meanwhile, does
   * nothing, but the one made meanwhile returns only once the first has ended: a session that
   * replaces a sandbox killed from outside starts the new one under the same name, and its cgroups
   * must not be swept by the first call (the agent link's, which broke with the sandbox) after they
   * are made.
   */
  @Override
  public void destroy() {
    synchronized (destroyed) {
      if (!destroyed.compareAndSet(false, true)) {
        return;
      }
      end();
    }
  }

  private void end() {
    if (agent != null) {
      agent.link().close();
    }
    // Killing the sandbox's init ends its pid namespace: every process in it dies, including
    // those that double-forked or called setsid. --die-with-parent does the same for bwrap,
    // and nsjail ends with its child.
    // The parent check keeps a recycled pid from being killed after the sandbox ended by itself.
    ProcessHandle maker = ParentDeath.jailOf(jail.toHandle());
    ProcessHandle.of(initPid)
        .filter(h -> h.parent().map(p -> p.pid() == maker.pid()).orElse(false))
        .ifPresent(ProcessHandle::destroyForcibly);
    ParentDeath.killTree(jail.toHandle());
    try {
      if (!jail.waitFor(5, TimeUnit.SECONDS)) {
        log.warn("the maker of sandbox {} did not exit within 5 s of SIGKILL", name);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (network != null) {
      UserModeNetwork.stop(network);
    }
    // The host-side launchers of its processes, and anything that escaped: the cgroup sweep.
    cgroup.destroy();
  }
}
