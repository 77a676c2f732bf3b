package dev.box.backend.docker;

import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.core.agent.AgentLink;
import dev.box.core.agent.HostPids;
import dev.box.core.backend.ProcessPrelude;
import dev.box.core.backend.ProcessSpec;
import dev.box.core.backend.SandboxGoneException;
import dev.box.core.backend.SandboxProcess;
import dev.box.guard.ExecAgent;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

/**
 * How a container's processes start through its exec agent rather than the engine's exec API: the
 * agent (a child of the container's init, restarted by the holder whenever it ends, so that a
 * server that adopts the container after a crash reaches a new one) forks each process, the server
 * finds it in the container's cgroup, moves it into a cgroup of its own within the container's, and
 * only then lets it run. Killing is by that cgroup, from the host; nothing inside is trusted to do
 * it.
 *
 * <p>Unlike in a namespace sandbox, the agent is not the container's PID 1: code in the container
 * can kill it. Its link then breaks and the container ends, as any agent that misbehaves ends its
 * sandbox.
 *
 * @param link the server's side of the agent
 * @param cgroup the container's cgroup
 * @param running whether the container still runs, asked of the engine
 */
record ContainerAgent(AgentLink link, ContainerCgroup cgroup, BooleanSupplier running) {
  private static final AtomicLong TREES = new AtomicLong();

  /**
   * The holder with the agent: {@code leaseHolder} keeps the container running, and beside it runs
   * the agent, its command given as more arguments, again whenever it ends (within a second), until
   * the container ends.
   */
  static List<String> holder(List<String> leaseHolder) {
    if (leaseHolder.size() < 3 || !leaseHolder.subList(0, 2).equals(List.of("/bin/sh", "-c"))) {
      throw new IllegalArgumentException("the lease holder must be a /bin/sh -c script");
    }
    List<String> holder = new ArrayList<>(leaseHolder);
    holder.addAll(List.of(ExecAgent.sandboxCommand()));
    return List.copyOf(holder);
  }

  /**
   * Starts {@code spec}.
   *
   * @throws SandboxGoneException when the container ended before the process could start
   */
  SandboxProcess spawn(ProcessSpec spec) {
    try {
      return start(spec);
    } catch (SandboxGoneException e) {
      throw e;
    } catch (BoxException e) {
      if (running.getAsBoolean()) {
        throw e;
      }
      link.breakLink("ended with its container");
      throw new SandboxGoneException(
          "the container ended while a process was starting: " + e.getMessage());
    }
  }

  private SandboxProcess start(ProcessSpec spec) {
    Map<String, String> env = new LinkedHashMap<>(ContainerCreateBody.BASE_ENV);
    env.putAll(ProcessPrelude.environment(spec, spec.memoryMb() > 0 ? spec.memoryMb() * 1024L : 0));
    ContainerCgroup.Tree tree;
    try {
      tree = cgroup.newTree("box-exec-" + TREES.incrementAndGet());
    } catch (IOException e) {
      throw new BoxException(
          BoxErrorCode.INTERNAL_ERROR, "cannot make the cgroup of a process: " + e.getMessage(), e);
    }
    try {
      return link.spawn(
          List.of("/bin/sh", "-c", ProcessPrelude.SCRIPT, "sh"),
          env,
          spec.stdin(),
          spec.terminal(),
          sandboxPid -> tree.admit(HostPids.find(cgroup.procs(), sandboxPid, -1)),
          tree);
    } catch (RuntimeException e) {
      tree.kill();
      tree.release();
      throw e;
    }
  }

  /** Closes the link and removes the cgroups kept for trees; the container is being removed. */
  void close() {
    link.close();
    cgroup.removeEmptyTrees();
  }

  /** Whether processes can start through the agent. */
  boolean usable() {
    return link.usable();
  }
}
