package dev.box.core.backend;

import java.nio.file.Path;

/**
 * A host directory, already resolved and checked by the policy, to mount into a sandbox.
 *
 * @param hostPath the real (symlink-free) host path
 * @param sandboxPath the absolute path inside the sandbox
 * @param readOnly whether it is mounted read-only
 */
public record SandboxMount(Path hostPath, String sandboxPath, boolean readOnly) {}
