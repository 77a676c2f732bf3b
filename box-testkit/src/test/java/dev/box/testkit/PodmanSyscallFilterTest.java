package dev.box.testkit;

import java.util.Map;

/**
 * The syscall filter suite against the Podman backend and the real Podman engine of this machine.
 */
class PodmanSyscallFilterTest extends SyscallFilterSuite {
  @Override
  protected String backendName() {
    return "podman";
  }

  @Override
  protected Map<String, String> serverSettings() {
    return ContainerEngines.serverSettings(backendName());
  }
}
