package dev.box.sandbox;

import dev.box.core.backend.ProcessSpec;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxProcess;
import org.jspecify.annotations.Nullable;

/**
 * A sandbox some of whose mounts come from idmapped mounts staged on the host for it ({@link
 * IdmappedMounts}): the staged mounts are detached when it is destroyed or let go of. Its own binds
 * of them live in its mount namespace (or the container's) and need no staged mount once made.
 *
 * @param sandbox the sandbox started on the staged mounts
 * @param unstage detaches them (idempotent)
 */
record StagedSandbox(Sandbox sandbox, Runnable unstage) implements ForwardingSandbox {

  @Override
  public SandboxProcess spawnHeld(ProcessSpec spec) {
    return sandbox.spawnHeld(spec);
  }

  @Override
  public @Nullable SandboxProcess reattach(String handle) {
    return sandbox.reattach(handle);
  }

  @Override
  public void destroy() {
    try {
      sandbox.destroy();
    } finally {
      unstage.run();
    }
  }

  @Override
  public void release() {
    try {
      sandbox.release();
    } finally {
      unstage.run();
    }
  }

  @Override
  public void removeWorkspace() {
    sandbox.removeWorkspace();
  }

  @Override
  public boolean preStarted() {
    return sandbox.preStarted();
  }
}
