package dev.box.testkit;

/**
 * The syscall filter suite against the Docker backend and the real Docker engine of this machine.
 */
class DockerSyscallFilterTest extends SyscallFilterSuite {
  @Override
  protected String backendName() {
    return "docker";
  }
}
