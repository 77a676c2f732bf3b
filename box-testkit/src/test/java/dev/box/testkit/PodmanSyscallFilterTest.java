package dev.box.testkit;

/**
 * The syscall filter suite against the Podman backend and the real Podman engine of this machine.
 */
class PodmanSyscallFilterTest extends SyscallFilterSuite {
  @Override
  protected String backendName() {
    return "podman";
  }
}
