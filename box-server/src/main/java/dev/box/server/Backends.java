package dev.box.server;

import dev.box.backend.boxlite.BoxliteBackend;
import dev.box.backend.bwrap.BwrapBackend;
import dev.box.backend.docker.ContainerBackend;
import dev.box.backend.docker.ContainerSettings;
import dev.box.backend.e2b.E2bBackend;
import dev.box.backend.kubernetes.KubernetesBackend;
import dev.box.backend.kubernetes.Replica;
import dev.box.backend.microvm.MicrovmBackend;
import dev.box.backend.microvm.MicrovmImages;
import dev.box.backend.nsjail.NsjailBackend;
import dev.box.core.backend.BackendChoice;
import dev.box.core.backend.Foreground;
import dev.box.core.backend.NoBackend;
import dev.box.core.backend.SandboxBackend;
import dev.box.guard.SyscallGuard;
import dev.box.sandbox.BackendRuntime;
import dev.box.sandbox.NamespaceSettings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Chooses the backend named by {@code --backend}, as LangBot's runtime does: {@code local} tries
 * Docker, then Podman, then bubblewrap, then nsjail, and the first available wins; an explicit name
 * never falls back to another (an unavailable one is reported by /v1/health and refuses sessions).
 * nsjail comes after bubblewrap: it gives the same guarantees through the same launcher and
 * cgroups, but is rarely packaged (it is built from source) and adds a process per session, so it
 * is chosen only on a host that has neither a container engine nor bubblewrap. E2B joins {@code
 * local}'s order, last, only when an API key is configured: it runs code on a remote service, which
 * an operator who configured nothing for it must not get by surprise, and a local sandbox, when one
 * works, keeps the host's files where they are. {@code local} never picks {@code microvm}: under
 * TCG a session takes seconds to boot, which only an operator who asks for a VM should pay.
 */
final class Backends {
  private static final Logger log = LoggerFactory.getLogger(Backends.class);
  private static final String KNOWN =
      "local, docker, podman, bwrap, nsjail, e2b, boxlite, kubernetes, microvm";

  /**
   * When no backend is ready: the first sentence of the reason, LangBot's message word for word.
   */
  static final String NO_BACKEND_MESSAGE =
      "LangBot Box backend unavailable. Install and start Docker or nsjail before using exec.";

  private Backends() {}

  /**
   * Opens the backend {@code name}.
   *
   * @throws IllegalArgumentException for a name this version does not know
   */
  static BackendChoice open(
      String name, ServerConfig config, String instanceId, Foreground foreground) {
    return switch (name) {
      case "local" -> local(config, instanceId, foreground);
      case "docker",
          "podman",
          "bwrap",
          "bubblewrap",
          "nsjail",
          "e2b",
          "boxlite",
          "kubernetes",
          "microvm" ->
          new BackendChoice(
              single(name, config, instanceId, foreground),
              name,
              "forced via backend=" + name,
              Map.of());
      default ->
          throw new IllegalArgumentException(
              "unknown backend '" + name + "' (available: " + KNOWN + ")");
    };
  }

  /**
   * Opens {@code name} as LangBot's {@code box_init} names it: an unknown or unsupported name is
   * not an error of the call but an unavailable backend that says so, as LangBot's runtime logs it
   * and answers every exec with "backend unavailable".
   */
  static BackendChoice forLangBot(
      String name, ServerConfig config, String instanceId, Foreground foreground) {
    try {
      return open(name, config, instanceId, foreground);
    } catch (IllegalArgumentException e) {
      String message =
          "LangBot Box backend \""
              + name
              + "\" not found (box.backend="
              + name
              + ", available: ["
              + KNOWN
              + "])";
      log.error(message);
      return new BackendChoice(new NoBackend(message), name, "box.backend=" + name, Map.of());
    }
  }

  private static BackendChoice local(
      ServerConfig config, String instanceId, Foreground foreground) {
    // Never e2b: an E2B key in the environment may be there for E2B's SDKs talking to this very
    // server (E2B_API_URL=http://HOST:PORT/e2b), and must not make Box its own backend.
    List<String> order = List.of("docker", "podman", "bwrap", "nsjail");
    return firstAvailable(
        order,
        name -> {
          // An engine without its socket is passed over without opening its backend, whose
          // probes (the host's firewall, idmapped mounts, its agent) would only slow the start.
          String missing =
              name.equals("docker") || name.equals("podman")
                  ? ContainerBackend.missingSocket(containerSettings(name, config))
                  : null;
          return missing != null
              ? new NoBackend(missing)
              : single(name, config, instanceId, foreground);
        });
  }

  /**
   * The first available of {@code candidates}, opened in order; the ones passed over are closed.
   * When none is available the selection is {@link NoBackend}, whose reason is LangBot's message.
   */
  static BackendChoice firstAvailable(
      List<String> candidates, java.util.function.Function<String, SandboxBackend> open) {
    Map<String, String> notChosen = new LinkedHashMap<>();
    for (String candidate : candidates) {
      SandboxBackend backend = open.apply(candidate);
      if (backend.status().available()) {
        return new BackendChoice(
            backend,
            "local",
            "first available of local (" + String.join(", ", candidates) + ")",
            notChosen);
      }
      notChosen.put(candidate, backend.status().reason());
      backend.close();
    }
    log.warn("no supported backend (Docker, Podman, bubblewrap, nsjail) is ready");
    return new BackendChoice(
        noneReady(notChosen), "local", "none of local is available", notChosen);
  }

  /** No backend, with LangBot's runtime's message followed by each candidate's reason. */
  private static NoBackend noneReady(Map<String, String> reasons) {
    return new NoBackend(
        NO_BACKEND_MESSAGE
            + " Box runs sandboxes with Docker, Podman, bubblewrap or nsjail; none is ready ("
            + reasons.entrySet().stream()
                .map(e -> e.getKey() + ": " + e.getValue())
                .collect(Collectors.joining("; "))
            + ")");
  }

  /** The settings of the container backend {@code name}, {@code docker} or {@code podman}. */
  private static ContainerSettings containerSettings(String name, ServerConfig config) {
    ContainerConfig containers = config.containers();
    return new ContainerSettings(
        name,
        Path.of(name.equals("docker") ? containers.dockerSocket() : containers.podmanSocket()),
        containers.image(),
        containers.cpuLimit(),
        containers.pullTimeout(),
        containers.seccompProfile(),
        containers.sandboxLease(),
        containers.writableRootMb(),
        config.isolation().execAgent(),
        config.isolation().poolSize());
  }

  private static SandboxBackend single(
      String name, ServerConfig config, String instanceId, Foreground foreground) {
    ContainerConfig containers = config.containers();
    // The composition root chooses the clock and the threads of every backend.
    BackendRuntime runtime = BackendRuntime.system(foreground);
    return switch (name) {
      case "e2b" ->
          new E2bBackend(
              config.e2b(),
              config.stateDir(),
              instanceId,
              config.isolation().sandboxUid(),
              runtime.timer("e2b-timeouts"));
      case "boxlite" -> new BoxliteBackend(config.boxlite(), config.stateDir(), instanceId);
      case "kubernetes" ->
          KubernetesBackend.open(
              config.kubernetes(),
              new Replica(
                  instanceId,
                  config.controlToken() == null ? "" : config.controlToken(),
                  containers.sandboxLease(),
                  Clock.systemUTC()),
              containers.image(),
              config.isolation().poolSize(),
              runtime.timer("kubernetes-timeouts"));
      case "docker", "podman" ->
          ContainerBackend.open(
              containerSettings(name, config),
              config.stateDir(),
              instanceId,
              config.isolation().egress(),
              runtime);
      case "microvm" ->
          // The directory scripts/microvm prepared: its own variable, as the script reads it.
          new MicrovmBackend(
              config.stateDir(),
              MicrovmBackend.filesDir(System.getenv("BOX_MICROVM_CACHE")),
              runtime,
              config.isolation().poolSize(),
              config.isolation().egress(),
              config.isolation().sandboxUid(),
              new MicrovmImages(
                  microvmEngine(containers),
                  containers.image(),
                  MicrovmImages.maxMb(System.getenv("BOX_MICROVM_IMAGE_MAX_MB"))));
      case "nsjail" ->
          new NsjailBackend(
              namespaceSettings(config, instanceId, runtime), config.isolation().nsjailPath());
      default -> new BwrapBackend(namespaceSettings(config, instanceId, runtime));
    };
  }

  /**
   * The engine the microvm backend exports sessions' images from: Docker's socket, else Podman's,
   * whichever is there; null when neither is.
   */
  private static @Nullable Path microvmEngine(ContainerConfig containers) {
    for (String socket : List.of(containers.dockerSocket(), containers.podmanSocket())) {
      Path path = Path.of(socket);
      if (Files.exists(path)) {
        return path;
      }
    }
    return null;
  }

  private static NamespaceSettings namespaceSettings(
      ServerConfig config, String instanceId, BackendRuntime runtime) {
    return new NamespaceSettings(
        config.stateDir(),
        instanceId,
        config.cgroups(),
        config.isolation().sandboxUid(),
        config.isolation().egress(),
        SyscallGuard.install(config.stateDir()),
        config.isolation().execAgent(),
        config.isolation().poolSize(),
        runtime);
  }
}
