package dev.box.server;

import dev.box.backend.bwrap.BwrapBackend;
import dev.box.core.backend.SandboxBackend;
import java.nio.file.Path;

/** Chooses the backend named by {@code --backend}. */
final class Backends {
  private Backends() {}

  /**
   * Opens the backend {@code name}: {@code local} is the best available local backend (today
   * bubblewrap), {@code bwrap} is bubblewrap; an explicit name never falls back to another.
   *
   * @throws IllegalArgumentException for a name this version does not know
   */
  static SandboxBackend open(String name, Path dataDir, String instanceId, boolean cgroups) {
    return switch (name) {
      case "local", "bwrap", "bubblewrap" -> new BwrapBackend(dataDir, instanceId, cgroups);
      case "docker", "podman", "nsjail", "e2b" ->
          throw new IllegalArgumentException(
              "backend '"
                  + name
                  + "' is not available in this version of Box (available: local, bwrap)");
      default ->
          throw new IllegalArgumentException(
              "unknown backend '" + name + "' (available: local, bwrap)");
    };
  }
}
