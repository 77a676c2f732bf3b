package dev.box.core.backend;

import java.nio.file.Path;

/**
 * A host directory, already resolved and checked by the policy, to mount into a sandbox.
 *
 * @param hostPath the real (symlink-free) host path
 * @param sandboxPath the absolute path inside the sandbox
 * @param readOnly whether it is mounted read-only
 * @param boxOwned whether the directory is Box's to hand to the sandbox user: created for this
 *     session (a private workspace, a missing {@code host_path}), or inside a root the runtime
 *     manages (LangBot's default workspace); the backend makes the sandbox user its owner
 */
public record SandboxMount(Path hostPath, String sandboxPath, boolean readOnly, boolean boxOwned) {

  /** A mount of a directory Box did not create. */
  public SandboxMount(Path hostPath, String sandboxPath, boolean readOnly) {
    this(hostPath, sandboxPath, readOnly, false);
  }
}
