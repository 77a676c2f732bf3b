package dev.box.backend.kubernetes;

import dev.box.core.agent.AgentLink;
import dev.box.core.backend.ProcessPrelude;
import dev.box.core.backend.ProcessSpec;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxProcess;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The sandbox of one session: its pod, and the link to the pod's agent, through which every process
 * starts and every process tree is killed.
 *
 * @param id the pod's name
 * @param link the link to the pod's agent
 * @param tunnel the way to the agent through the API server, or null when the link reaches it on
 *     the pod network
 * @param pods removes the pod
 */
record PodSandbox(String id, AgentLink link, @Nullable AgentTunnel tunnel, Pods pods)
    implements Sandbox {
  /** The environment every process starts from, before the spec's own. */
  static final Map<String, String> BASE_ENV =
      Map.of(
          "PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
          "HOME", PodShape.HOME,
          "LANG", "C.UTF-8",
          "PYTHONUNBUFFERED", "1");

  @Override
  public boolean isAlive() {
    return link.usable();
  }

  @Override
  public SandboxProcess spawn(ProcessSpec spec) {
    return spawn(spec, false);
  }

  /** The agent keeps the process's stdio: another replica reattaches when this one goes. */
  @Override
  public SandboxProcess spawnHeld(ProcessSpec spec) {
    return spawn(spec, true);
  }

  private SandboxProcess spawn(ProcessSpec spec, boolean held) {
    Map<String, String> env = new LinkedHashMap<>(BASE_ENV);
    env.putAll(ProcessPrelude.environment(spec, spec.memoryMb() > 0 ? spec.memoryMb() * 1024L : 0));
    List<String> argv = List.of("/bin/sh", "-c", ProcessPrelude.SCRIPT, "sh");
    return link.spawn(argv, env, spec.stdin(), held, spec.terminal());
  }

  /** The pod's own agent binary, in its pipe mode. */
  @Override
  public List<String> portPipe(int port) {
    return List.of(PodShape.BIN + "/box-agent", "--pipe", Integer.toString(port));
  }

  @Override
  public @Nullable SandboxProcess reattach(String handle) {
    return link.reattach(handle);
  }

  /** Closes the link, leaving the pod and its processes to the replicas that serve it. */
  @Override
  public void release() {
    link.close();
    closeTunnel();
  }

  /**
   * Has the agent kill every process of the session at once (those other replicas started too),
   * then closes the link and removes the pod with no grace period.
   */
  @Override
  public void destroy() {
    link.endAll();
    link.close();
    closeTunnel();
    pods.remove(id);
  }

  private void closeTunnel() {
    if (tunnel != null) {
      tunnel.close();
    }
  }

  /** Removes the session's workspace claim, if it is persistent. */
  @Override
  public void removeWorkspace() {
    pods.removeClaim(id);
  }
}
