package dev.box.testkit;

import java.util.Map;

/**
 * The syscall filter suite against the microvm backend: the attacks run in the guest, under
 * box-guard's filter there, with the attack programs' host folder shared into the VM read-only over
 * virtio-9p. The guest boots its own root (no host /usr): python3 is there, but not the host's
 * node, gcc or MCP server, so those cases are skipped. Needs what {@code scripts/microvm} prepares.
 */
class MicrovmSyscallFilterTest extends SyscallFilterSuite {
  @Override
  protected String backendName() {
    return "microvm";
  }

  @Override
  protected Map<String, String> serverSettings() {
    return MicrovmConformanceTest.settings();
  }
}
