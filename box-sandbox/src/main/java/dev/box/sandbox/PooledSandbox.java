package dev.box.sandbox;

import dev.box.core.backend.Sandbox;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A sandbox started ahead of its session by the {@link SandboxPool}; once taken, the session's
 * workspace is bound at its slot. Destroying it destroys the sandbox, then detaches the workspace
 * from the slot and removes the slot.
 *
 * @param sandbox the running sandbox, named after the pool ({@code <instance>_pool-<n>})
 * @param slot the host directory bound at the sandbox's workspace path
 * @param slots where the slot lives
 * @param bound whether a session's workspace is bound at the slot
 */
record PooledSandbox(Sandbox sandbox, Path slot, SandboxPool.Slots slots, AtomicBoolean bound)
    implements ForwardingSandbox {

  @Override
  public void pause() {
    sandbox.pause();
  }

  @Override
  public void resume() {
    sandbox.resume();
  }

  @Override
  public boolean preStarted() {
    return true;
  }

  @Override
  public void destroy() {
    sandbox.destroy();
    slots.release(slot, bound.getAndSet(false));
  }
}
