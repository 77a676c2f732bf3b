package dev.box.testkit;

/**
 * The syscall filter suite against the nsjail backend, whose jails see the host's /usr: the host's
 * python3, node, gcc and pip run inside.
 */
class NsjailSyscallFilterTest extends SyscallFilterSuite {
  @Override
  protected String backendName() {
    return "nsjail";
  }

  @Override
  protected boolean sandboxHasHostUsr() {
    return true;
  }
}
