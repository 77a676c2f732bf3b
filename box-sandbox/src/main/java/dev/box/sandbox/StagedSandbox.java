package dev.box.sandbox;

import dev.box.core.backend.ProcessSpec;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxProcess;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A sandbox some of whose mounts come from idmapped mounts staged on the host for it ({@link
 * IdmappedMounts}): the staged mounts are detached when it is destroyed or let go of. Its own binds
 * of them live in its mount namespace (or the container's) and need no staged mount once made.
 */
final class StagedSandbox implements Sandbox {
  private final Sandbox sandbox;
  private final Runnable unstage;

  StagedSandbox(Sandbox sandbox, Runnable unstage) {
    this.sandbox = sandbox;
    this.unstage = unstage;
  }

  @Override
  public String id() {
    return sandbox.id();
  }

  @Override
  public boolean isAlive() {
    return sandbox.isAlive();
  }

  @Override
  public SandboxProcess spawn(ProcessSpec spec) {
    return sandbox.spawn(spec);
  }

  @Override
  public SandboxProcess spawnHeld(ProcessSpec spec) {
    return sandbox.spawnHeld(spec);
  }

  @Override
  public @Nullable SandboxProcess reattach(String handle) {
    return sandbox.reattach(handle);
  }

  @Override
  public @Nullable List<String> portPipe(int port) {
    return sandbox.portPipe(port);
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
