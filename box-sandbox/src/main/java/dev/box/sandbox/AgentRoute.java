package dev.box.sandbox;

import dev.box.api.BoxException;
import dev.box.core.agent.AgentLink;
import dev.box.core.agent.AgentProcess;
import dev.box.core.agent.HostPids;
import dev.box.core.backend.ProcessPrelude;
import dev.box.core.backend.ProcessSpec;
import dev.box.core.backend.SandboxGoneException;
import dev.box.core.backend.SandboxProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * How a namespace sandbox's processes start through its exec agent: the agent (the sandbox's PID 1,
 * in a cgroup of its own within the sandbox's) forks each one, the server finds it in the agent's
 * cgroup, moves it into the process's cgroup, and only then lets it run the prelude.
 *
 * @param link the server's side of the agent
 * @param agentGroup the agent's cgroup, where what it forks waits to be admitted
 * @param agentPid the agent's host pid
 */
record AgentRoute(AgentLink link, CgroupDriver.ProcessCgroup agentGroup, long agentPid) {

  /** Whether processes can start through the agent. */
  boolean usable() {
    return link.usable();
  }

  /**
   * Starts {@code spec} in {@code group}.
   *
   * @throws SandboxGoneException when the sandbox ended before the process could start
   */
  SandboxProcess spawn(ProcessSpec spec, CgroupDriver.ProcessCgroup group) {
    try {
      return start(spec, group);
    } catch (SandboxGoneException e) {
      throw e;
    } catch (BoxException e) {
      if (agentAlive()) {
        throw e;
      }
      // The process vanished with its sandbox (killed from outside): say so, and end the link.
      link.breakLink("ended with its sandbox");
      throw new SandboxGoneException(
          "the sandbox ended while a process was starting: " + e.getMessage());
    }
  }

  /** Whether the agent is still in its cgroup: a process that exited has left it. */
  private boolean agentAlive() {
    try {
      return Files.readAllLines(agentGroup.procsFiles().get(0)).stream()
          .anyMatch(line -> line.strip().equals(Long.toString(agentPid)));
    } catch (IOException e) {
      return false;
    }
  }

  private SandboxProcess start(ProcessSpec spec, CgroupDriver.ProcessCgroup group) {
    Map<String, String> env = new LinkedHashMap<>(Launcher.BASE_ENV);
    env.putAll(ProcessPrelude.environment(spec, group.addressSpaceLimitKib()));
    Path waiting = agentGroup.procsFiles().get(0);
    List<Path> moves = moves(agentGroup, group);
    return link.spawn(
        List.of("/bin/sh", "-c", ProcessPrelude.SCRIPT, "sh"),
        env,
        spec.stdin(),
        spec.terminal(),
        sandboxPid -> {
          String pid = Long.toString(HostPids.find(waiting, sandboxPid, agentPid));
          for (Path procs : moves) {
            Files.writeString(procs, pid);
          }
        },
        new AgentProcess.Tree() {
          @Override
          public void terminate() {
            group.terminate(-1);
          }

          @Override
          public void kill() {
            group.kill();
          }

          @Override
          public void release() {
            group.releaseIfEmpty();
          }
        });
  }

  /**
   * The {@code cgroup.procs} files a process the agent forked must be written to, to be in {@code
   * group}: what the agent forks starts in {@code agentGroup}, so a hierarchy where {@code group}
   * is the agent's cgroup (v1's session-wide memory, cpu and freezer cgroups, unless the process
   * has a memory limit of its own) needs no move. Each write is a cgroup migration, taken under the
   * kernel's cgroup locks.
   */
  static List<Path> moves(CgroupDriver.ProcessCgroup agentGroup, CgroupDriver.ProcessCgroup group) {
    List<Path> already = agentGroup.procsFiles();
    return group.procsFiles().stream().filter(procs -> !already.contains(procs)).toList();
  }

  /** Puts the agent into its own cgroup, before it forks anything. */
  static void admitAgent(CgroupDriver.ProcessCgroup agentGroup, long agentPid) throws IOException {
    for (Path procs : agentGroup.procsFiles()) {
      Files.writeString(procs, Long.toString(agentPid));
    }
  }
}
