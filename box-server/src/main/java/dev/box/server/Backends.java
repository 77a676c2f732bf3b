package dev.box.server;

import dev.box.backend.bwrap.BwrapBackend;
import dev.box.backend.docker.ContainerBackend;
import dev.box.core.backend.SandboxBackend;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Chooses the backend named by {@code --backend}, as LangBot's runtime does: {@code local} tries
 * Docker, then Podman, then bubblewrap, and the first available wins; an explicit name never falls
 * back to another (an unavailable one is reported by /v1/health and refuses sessions).
 */
final class Backends {
  private static final Logger log = LoggerFactory.getLogger(Backends.class);
  private static final String KNOWN = "local, docker, podman, bwrap";

  private Backends() {}

  /**
   * The chosen backend, and for each other candidate why it was not chosen.
   *
   * @param backend the backend that serves sessions
   * @param why how it was chosen
   * @param notChosen the other candidates of {@code local}, with the reason each was passed over
   */
  record Selection(SandboxBackend backend, String why, Map<String, String> notChosen) {}

  /**
   * Opens the backend {@code name}.
   *
   * @throws IllegalArgumentException for a name this version does not know
   */
  static Selection open(String name, ServerConfig config, String instanceId) {
    return switch (name) {
      case "local" -> local(config, instanceId);
      case "docker", "podman", "bwrap", "bubblewrap" ->
          new Selection(single(name, config, instanceId), "forced via backend=" + name, Map.of());
      case "nsjail", "e2b" ->
          throw new IllegalArgumentException(
              "backend '"
                  + name
                  + "' is not available in this version of Box (available: "
                  + KNOWN
                  + ")");
      default ->
          throw new IllegalArgumentException(
              "unknown backend '" + name + "' (available: " + KNOWN + ")");
    };
  }

  private static Selection local(ServerConfig config, String instanceId) {
    return firstAvailable(
        List.of("docker", "podman", "bwrap"), name -> single(name, config, instanceId));
  }

  /**
   * The first available of {@code candidates}, opened in order; the ones passed over are closed.
   * When none is available the selection is {@link NoBackend}, whose reason is LangBot's message.
   */
  static Selection firstAvailable(
      List<String> candidates, java.util.function.Function<String, SandboxBackend> open) {
    Map<String, String> notChosen = new LinkedHashMap<>();
    for (String candidate : candidates) {
      SandboxBackend backend = open.apply(candidate);
      if (backend.status().available()) {
        return new Selection(
            backend, "first available of local (" + String.join(", ", candidates) + ")", notChosen);
      }
      notChosen.put(candidate, backend.status().reason());
      backend.close();
    }
    log.warn("no supported backend (Docker, Podman, bubblewrap) is ready");
    return new Selection(new NoBackend(notChosen), "none of local is available", notChosen);
  }

  private static SandboxBackend single(String name, ServerConfig config, String instanceId) {
    ContainerConfig containers = config.containers();
    return switch (name) {
      case "docker", "podman" ->
          new ContainerBackend(
              new ContainerBackend.Settings(
                  name,
                  Path.of(
                      name.equals("docker")
                          ? containers.dockerSocket()
                          : containers.podmanSocket()),
                  containers.image(),
                  containers.cpuLimit(),
                  containers.pullTimeout()),
              config.dataDir(),
              instanceId);
      default -> new BwrapBackend(config.dataDir(), instanceId, config.cgroups());
    };
  }
}
