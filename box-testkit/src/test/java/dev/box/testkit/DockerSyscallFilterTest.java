package dev.box.testkit;

import java.util.Map;

/**
 * The syscall filter suite against the Docker backend and the real Docker engine of this machine.
 */
class DockerSyscallFilterTest extends SyscallFilterSuite {
  @Override
  protected String backendName() {
    return "docker";
  }

  @Override
  protected Map<String, String> serverSettings() {
    return ContainerEngines.serverSettings(backendName());
  }
}
