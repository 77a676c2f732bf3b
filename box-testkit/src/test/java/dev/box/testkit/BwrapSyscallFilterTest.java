package dev.box.testkit;

/**
 * The syscall filter suite against the bubblewrap backend, whose sandboxes see the host's /usr: the
 * host's python3, node, gcc and pip run inside.
 */
class BwrapSyscallFilterTest extends SyscallFilterSuite {
  @Override
  protected String backendName() {
    return "bwrap";
  }

  @Override
  protected boolean sandboxHasHostUsr() {
    return true;
  }
}
