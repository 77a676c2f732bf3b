package dev.box.core.backend;

import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import java.util.Map;

/**
 * The backend selection gives when none can serve: it runs nothing, reports itself unavailable with
 * its reason, and answers every sandbox request with that reason ({@link
 * BoxErrorCode#BACKEND_UNAVAILABLE}).
 */
public final class NoBackend implements SandboxBackend {
  private final BackendStatus status;

  /** No backend, for the reason {@code reason}. */
  public NoBackend(String reason) {
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
