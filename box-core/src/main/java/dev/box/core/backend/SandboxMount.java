package dev.box.core.backend;

import java.nio.file.Path;

/**
 * A host directory, already resolved and checked by the policy, to mount into a sandbox.
 *
 * @param hostPath the real (symlink-free) host path
 * @param sandboxPath the absolute path inside the sandbox
 * @param readOnly whether it is mounted read-only
 * @param created whether Box created the directory for this session (a private workspace, or a
 *     missing {@code host_path}); the backend hands such a directory to the sandbox user
 */
public record SandboxMount(Path hostPath, String sandboxPath, boolean readOnly, boolean created) {

  /** A mount of a directory Box did not create. */
  public SandboxMount(Path hostPath, String sandboxPath, boolean readOnly) {
    this(hostPath, sandboxPath, readOnly, false);
  }
}
