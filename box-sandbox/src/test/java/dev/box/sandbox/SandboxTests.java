package dev.box.sandbox;

import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxBackend;
import dev.box.core.backend.SandboxSpec;

/** Runs a test's body in a sandbox a real backend starts for it. */
public final class SandboxTests {
  private SandboxTests() {}

  /** A test's body, which runs in a sandbox. */
  @FunctionalInterface
  public interface Body {
    void run(Sandbox sandbox) throws Exception;
  }

  /**
   * Starts a sandbox of {@code spec} on {@code backend}, runs {@code body} in it and destroys it,
   * whatever the body did.
   */
  public static void inSandbox(SandboxBackend backend, SandboxSpec spec, Body body)
      throws Exception {
    Sandbox sandbox = backend.start(spec);
    try {
      body.run(sandbox);
    } finally {
      sandbox.destroy();
    }
  }
}
