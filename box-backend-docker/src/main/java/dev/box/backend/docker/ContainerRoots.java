package dev.box.backend.docker;

import com.fasterxml.jackson.databind.JsonNode;
import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.core.backend.RootCopies;
import dev.box.core.backend.Sandbox;
import dev.box.sandbox.engine.EngineClient;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The copies of containers' writable roots on the engine ({@link RootCopies}): a copy is an image
 * committed from the container ({@code POST /commit}, the container paused meanwhile), which stores
 * the container's layer only, what it changed over its image, so that it costs what changed.
 *
 * <p>Every such image is in the repository {@code box-root-<hash of the data dir>}, and its tags
 * are the references to it: {@code kept-<hex>}, a copy kept for a snapshot (or for a fork while its
 * container is created), and {@code c-<hex>}, the one each container started from a copy holds,
 * named by its label {@value #LABEL} and removed with it. The engine deletes an image with its last
 * tag, and refuses to while a container uses it: so an image goes once no snapshot keeps it and no
 * container uses it. A tag is never removed by force (Podman's force removes the containers that
 * use the image too). Images of this repository are never pulled ({@link #isCopy}).
 */
final class ContainerRoots implements RootCopies {
  private static final Logger log = LoggerFactory.getLogger(ContainerRoots.class);
  private static final String PREFIX = "box-root-";
  private static final String KEPT = "kept-";
  private static final String CONTAINER = "c-";
  private static final Duration CALL_TIMEOUT = Duration.ofSeconds(30);

  /** The label of a container started from a copy: the image (its own tag) it started from. */
  static final String LABEL = "dev.box.root";

  private final EngineClient client;
  private final String engine;
  private final String repository;
  private final Duration commitTimeout;

  /**
   * @param engine {@code docker} or {@code podman}, for messages
   * @param dataLabel the hash of the server's data directory
   * @param commitTimeout how long a commit may take (it writes what the container changed)
   */
  ContainerRoots(EngineClient client, String engine, String dataLabel, Duration commitTimeout) {
    this.client = client;
    this.engine = engine;
    this.repository = PREFIX + dataLabel;
    this.commitTimeout = commitTimeout;
  }

  /** Whether {@code image} names a copy of a writable root, of any data directory's. */
  static boolean isCopy(String image) {
    return image.startsWith(PREFIX);
  }

  @Override
  public String describe() {
    return "the container's writable root too, unless read_only_rootfs: an image committed from"
        + " the container (paused meanwhile) that holds what it changed over its image; a fork's"
        + " container starts from it, a snapshot keeps it";
  }

  /**
   * Commits the container of {@code sandbox} to a new tag of this repository, paused while the
   * engine copies its layer (a paused container stays paused).
   */
  @Override
  public String keep(Sandbox sandbox) {
    String tag = KEPT + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
    String path =
        "/commit?container="
            + encode(sandbox.id())
            + "&repo="
            + encode(repository)
            + "&tag="
            + tag
            + "&pause=true";
    try {
      // An empty configuration: the image keeps the container's, which a container started from
      // it replaces with its own (ContainerCreateBody sets every field and label Box relies on).
      EngineClient.Response committed = client.call("POST", path, Map.of(), commitTimeout);
      if (!committed.ok()) {
        throw new BoxException(
            BoxErrorCode.INTERNAL_ERROR,
            engine
                + " cannot copy the writable root of container "
                + sandbox.id()
                + ": "
                + committed.message());
      }
    } catch (IOException e) {
      throw new BoxException(
          BoxErrorCode.INTERNAL_ERROR,
          engine + " cannot copy the writable root of container " + sandbox.id() + ": " + e,
          e);
    }
    return repository + ":" + tag;
  }

  /**
   * A tag of its own on the copy {@code root} for a container to start from, which holds the image
   * while the container lives ({@link #release} after the container is removed).
   *
   * @throws BoxException when {@code root} is not a copy of this data directory, or is gone
   */
  String use(String root) throws IOException {
    if (!root.startsWith(repository + ":" + KEPT)) {
      throw new BoxException(
          BoxErrorCode.VALIDATION_ERROR, root + " is not a copy of a writable root of this server");
    }
    String tag = CONTAINER + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
    EngineClient.Response tagged =
        client.call(
            "POST",
            "/images/" + encode(root) + "/tag?repo=" + encode(repository) + "&tag=" + tag,
            null,
            CALL_TIMEOUT);
    if (!tagged.ok()) {
      throw new BoxException(
          tagged.status() == 404 ? BoxErrorCode.NOT_FOUND : BoxErrorCode.INTERNAL_ERROR,
          "the copy of a writable root "
              + root
              + " cannot be used on "
              + engine
              + ": "
              + tagged.message());
    }
    return repository + ":" + tag;
  }

  @Override
  public void drop(String root) {
    if (root.startsWith(repository + ":" + KEPT)) {
      untag(client, root);
    } else {
      log.warn("not dropping {}: it is not a copy of a writable root of this server", root);
    }
  }

  /**
   * Removes the tag {@code image} of a copy, without force: the image goes with its last tag, once
   * no container uses it. A failure is logged.
   */
  static void untag(EngineClient client, String image) {
    try {
      EngineClient.Response removed =
          client.call("DELETE", "/images/" + encode(image), null, CALL_TIMEOUT);
      if (!removed.ok() && removed.status() != 404) {
        log.warn("cannot remove the image {}: {}", image, removed.message());
      }
    } catch (IOException e) {
      log.warn("cannot remove the image {}: {}", image, e.toString());
    }
  }

  @Override
  public void removeOthers(Set<String> kept) {
    for (String tag : tags()) {
      if (tag.startsWith(repository + ":" + KEPT) && !kept.contains(tag)) {
        log.info("removing a copy of a writable root that no snapshot keeps: {}", tag);
        untag(client, tag);
      }
    }
  }

  /**
   * Removes the tags of containers that no longer exist: {@code used} are those the containers of
   * this data directory still name ({@value #LABEL}).
   */
  void removeUnused(Set<String> used) {
    for (String tag : tags()) {
      if (tag.startsWith(repository + ":" + CONTAINER) && !used.contains(tag)) {
        log.info("removing the writable root of a container that is gone: {}", tag);
        untag(client, tag);
      }
    }
  }

  /** Every tag of this repository; empty when the engine cannot say. */
  List<String> tags() {
    List<String> tags = new ArrayList<>();
    String filters = "{\"reference\":[\"" + repository + "\"]}";
    try {
      EngineClient.Response list =
          client.call("GET", "/images/json?filters=" + encode(filters), null, CALL_TIMEOUT);
      if (!list.ok()) {
        log.warn("cannot list the copies of writable roots: {}", list.message());
        return tags;
      }
      for (JsonNode image : list.json()) {
        for (JsonNode tag : image.path("RepoTags")) {
          String name = normal(tag.asText(""));
          if (name.startsWith(repository + ":")) {
            tags.add(name);
          }
        }
      }
    } catch (IOException e) {
      log.warn("cannot list the copies of writable roots: {}", e.toString());
    }
    return tags;
  }

  /**
   * {@code name} without the registry and namespace Podman puts before a short name ({@code
   * docker.io/library/}, {@code localhost/}).
   */
  private static String normal(String name) {
    for (String qualifier : List.of("docker.io/library/", "localhost/")) {
      if (name.startsWith(qualifier)) {
        return name.substring(qualifier.length());
      }
    }
    return name;
  }

  /** The image a container started from a copy holds, from its labels; null for any other. */
  static @Nullable String heldBy(JsonNode labels) {
    String image = labels.path(LABEL).asText("");
    return isCopy(image) ? image : null;
  }

  private static String encode(String value) {
    return URLEncoder.encode(value, StandardCharsets.UTF_8);
  }
}
