package dev.box.server;

import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.core.backend.BackendStatus;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxBackend;
import dev.box.core.backend.SandboxSpec;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * What selection gives when no backend can serve: {@code local} with none available (LangBot's
 * message, followed by each candidate's reason), or a name LangBot's {@code box_init} gives that
 * Box does not have. It runs nothing and says why to every session request.
 */
final class NoBackend implements SandboxBackend {
  /** The first sentence is LangBot's runtime's message for this case, word for word. */
  static final String MESSAGE =
      "LangBot Box backend unavailable. Install and start Docker or nsjail before using exec.";

  private final BackendStatus status;

  NoBackend(Map<String, String> reasons) {
    this(
        MESSAGE
            + " Box runs sandboxes with Docker, Podman or bubblewrap; none is ready ("
            + reasons.entrySet().stream()
                .map(e -> e.getKey() + ": " + e.getValue())
                .collect(Collectors.joining("; "))
            + ")");
  }

  /** No backend, for the reason {@code reason}. */
  NoBackend(String reason) {
    this.status =
        new BackendStatus(
            BackendStatus.NONE,
            false,
            reason,
            Map.of("memory", "none", "pids", "none", "cpu", "none"));
  }

  @Override
  public String name() {
    return BackendStatus.NONE;
  }

  @Override
  public BackendStatus status() {
    return status;
  }

  @Override
  public Sandbox start(SandboxSpec spec) {
    throw new BoxException(BoxErrorCode.BACKEND_UNAVAILABLE, status.reason());
  }

  @Override
  public void removeOrphans() {
    // Nothing was ever started.
  }

  @Override
  public void close() {
    // Nothing to release.
  }
}
