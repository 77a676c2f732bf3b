package dev.box.backend.docker;

import com.fasterxml.jackson.databind.JsonNode;
import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.core.session.SandboxNames;
import dev.box.guard.ExecAgent;
import dev.box.sandbox.engine.EngineClient;
import dev.box.sandbox.engine.EnginePaths;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The session containers of this server on the engine: created (the image pulled first when the
 * engine does not have it), started and removed; and those an earlier instance of the server left,
 * found by the labels {@link ContainerCreateBody} gives them, removed.
 *
 * @param client the engine's API
 * @param engine {@code docker} or {@code podman}, for messages
 * @param puller pulls an image the engine does not have
 * @param instanceId the id of this server instance
 * @param dataLabel the hash of the server's data directory
 * @param callTimeout how long the engine may take to answer
 * @param adopted the containers of an earlier instance this one took over (persistent sessions
 *     restored after a crash), which are this instance's from then on
 */
record EngineContainers(
    EngineClient client,
    String engine,
    ImagePuller puller,
    String instanceId,
    String dataLabel,
    Duration callTimeout,
    Set<String> adopted) {
  private static final Logger log = LoggerFactory.getLogger(EngineContainers.class);

  /**
   * A container taken over from an earlier instance.
   *
   * @param agentDir the host directory of its exec agent's socket, or null when it was made without
   *     an agent
   * @param root the tag of the copied writable root it started from, or null ({@link
   *     ContainerRoots})
   */
  record Adopted(String id, String name, @Nullable Path agentDir, @Nullable String root) {}

  /** Creates the container, pulling the image first when the engine does not have it; its id. */
  String create(String name, Map<String, Object> body, String image) throws IOException {
    String path = EnginePaths.createContainer(name);
    EngineClient.Response created = client.call("POST", path, body, callTimeout);
    if (created.status() == 404) {
      puller.pull(image);
      created = client.call("POST", path, body, callTimeout);
    }
    String id = created.json().path("Id").asText("");
    if (!created.ok() || id.isEmpty()) {
      throw new BoxException(
          created.status() == 400 ? BoxErrorCode.VALIDATION_ERROR : BoxErrorCode.INTERNAL_ERROR,
          engine + " backend error: cannot create container: " + created.message());
    }
    return id;
  }

  /** Starts the created container {@code containerId}. */
  void start(String containerId) throws IOException {
    EngineClient.Response started =
        client.call("POST", "/containers/" + containerId + "/start", null, callTimeout);
    if (!started.ok()) {
      throw new BoxException(
          BoxErrorCode.INTERNAL_ERROR,
          engine + " backend error: cannot start container: " + started.message());
    }
  }

  /** Removes the container {@code nameOrId}, running or not; a failure is only logged. */
  void remove(String nameOrId) {
    try {
      client.call("DELETE", EnginePaths.forceRemove(nameOrId), null, callTimeout);
    } catch (IOException e) {
      log.warn("cannot remove container {}: {}", nameOrId, e.toString());
    }
  }

  /**
   * Removes the containers of this data directory that another instance of the server left and this
   * one did not adopt; with {@code sparePersistent}, the running ones of persistent sessions are
   * kept for the restore to adopt.
   */
  void removeOrphans(boolean sparePersistent) {
    for (JsonNode container : ours()) {
      String id = container.path("Id").asText();
      JsonNode labels = container.path("Labels");
      boolean persistentAndRunning =
          labels.path(ContainerCreateBody.PERSISTENT_LABEL).asText("").equals("true")
              && container.path("State").asText("").equals("running");
      if (labels.path("langbot.box.instance_id").asText("").equals(instanceId)
          || adopted.contains(id)
          || (sparePersistent && persistentAndRunning)) {
        continue;
      }
      log.info(
          "removing container left by an earlier instance: {}",
          container.path("Names").path(0).asText(id));
      remove(id);
    }
  }

  /**
   * The running container an earlier instance left for the persistent session {@code sessionId},
   * taken over by this instance: its id and name; null when there is none.
   */
  @Nullable Adopted adopt(String sessionId) {
    for (JsonNode container : ours()) {
      JsonNode labels = container.path("Labels");
      if (labels.path(ContainerCreateBody.PERSISTENT_LABEL).asText("").equals("true")
          && labels.path("langbot.session_id").asText("").equals(sessionId)
          && container.path("State").asText("").equals("running")
          && !labels.path("langbot.box.instance_id").asText("").equals(instanceId)) {
        String id = container.path("Id").asText();
        adopted.add(id);
        String name = container.path("Names").path(0).asText(id);
        return new Adopted(
            id,
            name.startsWith("/") ? name.substring(1) : name,
            agentDir(container),
            ContainerRoots.heldBy(labels));
      }
    }
    return null;
  }

  /** The tags of copied writable roots that this data directory's containers hold. */
  Set<String> heldRoots() {
    Set<String> held = new HashSet<>();
    for (JsonNode container : ours()) {
      String root = ContainerRoots.heldBy(container.path("Labels"));
      if (root != null) {
        held.add(root);
      }
    }
    return held;
  }

  /** The agent socket directories of this data directory's containers that the engine still has. */
  Set<Path> agentDirs() {
    Set<Path> dirs = new HashSet<>();
    for (JsonNode container : ours()) {
      Path dir = agentDir(container);
      if (dir != null) {
        dirs.add(dir);
      }
    }
    return dirs;
  }

  /** The host directory mounted as the exec agent's socket directory, or null. */
  private static @Nullable Path agentDir(JsonNode container) {
    for (JsonNode mount : container.path("Mounts")) {
      if (mount.path("Destination").asText("").equals(ExecAgent.SOCKET_DIR)) {
        String source = mount.path("Source").asText("");
        return source.isEmpty() ? null : Path.of(source);
      }
    }
    return null;
  }

  /** Every container of this data directory, running or not; empty when the engine is silent. */
  private List<JsonNode> ours() {
    String filters = "{\"label\":[\"langbot.box=true\",\"dev.box.data=" + dataLabel + "\"]}";
    try {
      EngineClient.Response list =
          client.call("GET", EnginePaths.listContainers(filters), null, callTimeout);
      if (!list.ok()) {
        log.warn("cannot list the containers of this data dir: {}", list.message());
        return List.of();
      }
      List<JsonNode> all = new ArrayList<>();
      list.json().forEach(all::add);
      return all;
    } catch (IOException e) {
      log.warn("cannot list the containers of this data dir: {}", e.toString());
      return List.of();
    }
  }

  /** {@code langbot-box-<normalised id>-<8 hex>}, as LangBot's runtime names its containers. */
  static String nameFor(String sessionId) {
    return "langbot-box-"
        + SandboxNames.normalise(sessionId)
        + "-"
        + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
  }
}
