package dev.box.core.session;

import dev.box.core.backend.Sandbox;
import java.nio.file.Path;
import org.jspecify.annotations.Nullable;

/**
 * Where a session runs: its sandbox, the backend that started it, and its private workspace.
 *
 * @param backend the name of the backend that started the sandbox
 * @param privateWorkspace the host directory of a workspace only this session uses, or null when it
 *     mounts a host path
 */
record Placement(Sandbox sandbox, String backend, @Nullable Path privateWorkspace) {}
