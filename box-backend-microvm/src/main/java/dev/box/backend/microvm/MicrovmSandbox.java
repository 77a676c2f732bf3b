package dev.box.backend.microvm;

import dev.box.core.agent.AgentLink;
import dev.box.core.backend.ProcessPrelude;
import dev.box.core.backend.ProcessSpec;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxProcess;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The sandbox of one session: its VM, and the link to the agent in the guest, through which every
 * process starts and every process tree is killed.
 *
 * @param id the VM's name
 * @param link the link to the guest's agent
 * @param vm the VM
 * @param onDestroy told the VM's name once it is destroyed
 */
record MicrovmSandbox(String id, AgentLink link, Vm vm, Consumer<String> onDestroy)
    implements Sandbox {
  /** The environment every process starts from, before the spec's own. */
  private static final Map<String, String> BASE_ENV =
      Map.of(
          "PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
          "HOME", "/workspace",
          "LANG", "C.UTF-8",
          "PYTHONUNBUFFERED", "1");

  @Override
  public boolean isAlive() {
    return link.usable() && vm.alive();
  }

  @Override
  public SandboxProcess spawn(ProcessSpec spec) {
    Map<String, String> env = new LinkedHashMap<>(BASE_ENV);
    env.putAll(ProcessPrelude.environment(spec, spec.memoryMb() > 0 ? spec.memoryMb() * 1024L : 0));
    return link.spawn(
        List.of("/bin/sh", "-c", ProcessPrelude.SCRIPT, "sh"), env, spec.stdin(), false);
  }

  /** Closes the link and kills QEMU: every process of the session ends with its kernel. */
  @Override
  public void destroy() {
    link.close();
    vm.destroy();
    onDestroy.accept(id);
  }
}
