package dev.box.sandbox;

import dev.box.core.backend.ProcessSpec;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxProcess;
import dev.box.core.backend.SandboxUsage;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A sandbox that is another one with something of Box's around it (a pool's slot, staged mounts):
 * what it runs, and whether it runs, are the other one's.
 */
interface ForwardingSandbox extends Sandbox {
  /** The sandbox this one is. */
  Sandbox sandbox();

  @Override
  default String id() {
    return sandbox().id();
  }

  @Override
  default boolean isAlive() {
    return sandbox().isAlive();
  }

  @Override
  default SandboxProcess spawn(ProcessSpec spec) {
    return sandbox().spawn(spec);
  }

  @Override
  default SandboxUsage usage() {
    return sandbox().usage();
  }

  @Override
  default @Nullable List<String> portPipe(int port) {
    return sandbox().portPipe(port);
  }
}
