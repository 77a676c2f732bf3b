package dev.box.backend.docker;

import com.fasterxml.jackson.databind.JsonNode;
import dev.box.sandbox.engine.EngineClient;
import dev.box.sandbox.engine.EnginePaths;
import java.io.IOException;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Bounds the writable root of a container whose session asks for one ({@code read_only_rootfs:
 * false}) with the engine's {@code size} storage option, where its storage driver applies it.
 *
 * <p>Docker applies {@code size} with the btrfs driver (a qgroup limit on the container's
 * subvolume, which counts the image's files too: the image's size is added, so that the sandbox may
 * write {@code writable_root_mb}), with zfs (a quota on the container's clone), and with overlay2
 * on XFS mounted with project quotas. Podman applies it with overlay on XFS with project quotas
 * only. Which of these an engine has is read from its {@code /info} once; on overlay over XFS,
 * where only the mount options tell, the first container tries, and an engine that refuses the
 * option is remembered as not bounding (the container is then made without it). Anything else is
 * reported in {@code /v1/health} ({@code enforced.writable_root}), never claimed.
 */
final class WritableRoot {
  private static final Logger log = LoggerFactory.getLogger(WritableRoot.class);
  private static final Duration CALL_TIMEOUT = Duration.ofSeconds(10);
  private static final long MIB = 1024L * 1024L;

  /** How the engine's storage bounds a container's layer. */
  enum Bound {
    /** Not known yet: the engine has not answered {@code /info}. */
    UNKNOWN,
    /** {@code size} is applied and counts the image's files too (btrfs). */
    WITH_IMAGE,
    /** {@code size} is applied and counts what the container writes (zfs, overlay on XFS). */
    WRITES,
    /** The driver may apply {@code size}: the first container tries. */
    TRIAL,
    /** {@code size} is not applied by this engine's storage. */
    NONE
  }

  private final String engine;
  private final EngineClient client;
  private final int megabytes;
  private volatile Bound bound = Bound.UNKNOWN;
  private volatile String description = "not known yet: the engine has not answered";

  /**
   * @param engine {@code docker} or {@code podman}
   * @param client the engine's API
   * @param megabytes what a sandbox may write to its root, in MiB; 0 for no bound
   */
  WritableRoot(String engine, EngineClient client, int megabytes) {
    this.engine = engine;
    this.client = client;
    this.megabytes = megabytes;
    if (megabytes == 0) {
      bound = Bound.NONE;
      description = "none: writable_root_mb is 0 (the engine's layer on the host disk)";
    }
  }

  /** The {@code writable_root} entry of health: what bounds a writable root, or why nothing. */
  String enforced() {
    learn();
    return description;
  }

  /** Reads the engine's storage driver once it answers. */
  private void learn() {
    if (bound != Bound.UNKNOWN) {
      return;
    }
    try {
      EngineClient.Response info = client.call("GET", "/info", null, CALL_TIMEOUT);
      if (info.ok()) {
        learn(info.json());
      }
    } catch (IOException e) {
      log.debug("{}: cannot read /info yet: {}", engine, e.toString());
    }
  }

  private synchronized void learn(JsonNode info) {
    if (bound != Bound.UNKNOWN) {
      return;
    }
    String driver = info.path("Driver").asText("?");
    String backing = backingFilesystem(info);
    String limit = "writable_root_mb=" + megabytes;
    boolean docker = engine.equals("docker");
    if (driver.equals("btrfs") && docker) {
      bound = Bound.WITH_IMAGE;
      description = "btrfs quota: " + limit + " beyond the image (storage driver btrfs)";
    } else if (driver.equals("zfs") && docker) {
      bound = Bound.WRITES;
      description = "zfs quota: " + limit + " (storage driver zfs)";
    } else if ((driver.equals("overlay2") || driver.equals("overlay")) && backing.equals("xfs")) {
      bound = Bound.TRIAL;
      description = "xfs project quota: " + limit + " (storage driver " + driver + " on xfs)";
    } else {
      unbounded(driver, backing);
    }
  }

  private void unbounded(String driver, String backing) {
    bound = Bound.NONE;
    description =
        "none: "
            + engine
            + "'s storage driver "
            + driver
            + (backing.isEmpty() ? "" : " on " + backing)
            + " cannot bound a container's layer (Docker on btrfs or zfs, or overlay on XFS with"
            + " project quotas, can)";
  }

  /** The backing file system {@code /info} names ({@code xfs}, {@code extfs}), or empty. */
  private static String backingFilesystem(JsonNode info) {
    for (JsonNode pair : info.path("DriverStatus")) {
      if (pair.size() == 2 && pair.get(0).asText("").equalsIgnoreCase("Backing Filesystem")) {
        return pair.get(1).asText("").toLowerCase(Locale.ROOT);
      }
    }
    // Podman's compatible /info has no DriverStatus; its own store reports the graph's file system.
    String graph = info.path("Store").path("GraphStatus").path("Backing Filesystem").asText("");
    return graph.toLowerCase(Locale.ROOT);
  }

  /**
   * The {@code StorageOpt} of a container from {@code image} with a writable root, or null when the
   * engine does not bound it.
   *
   * @param imageSize the image's size in bytes, when the bound counts it
   */
  @Nullable Map<String, String> storageOpt(ImageSize imageSize) throws IOException {
    learn();
    long mib =
        switch (bound) {
          case WITH_IMAGE -> megabytes + (imageSize.bytes() + MIB - 1) / MIB;
          case WRITES, TRIAL -> megabytes;
          case UNKNOWN, NONE -> -1;
        };
    return mib < 0 ? null : Map.of("size", mib + "M");
  }

  /**
   * Whether {@code message}, the engine's refusal of a container, is a refusal of the {@code size}
   * option: then this engine is remembered as not bounding, and the caller creates the container
   * without it.
   */
  boolean refused(String message) {
    if (bound != Bound.TRIAL) {
      return false;
    }
    String text = message.toLowerCase(Locale.ROOT);
    if (text.contains("storage-opt")
        || text.contains("storage opt")
        || text.contains("pquota")
        || text.contains("unknown option size")) {
      bound = Bound.NONE;
      description = "none: " + engine + " refused the size storage option: " + message;
      log.warn("{}: a writable root is not bounded: {}", engine, message);
      return true;
    }
    return false;
  }

  /** Reads an image's size from the engine. */
  @FunctionalInterface
  interface ImageSize {
    /** The image's size in bytes. */
    long bytes() throws IOException;
  }

  /** The size in bytes of {@code image} as the engine reports it, or empty when it has none. */
  static OptionalLong imageBytes(EngineClient client, String image) throws IOException {
    EngineClient.Response inspected =
        client.call("GET", EnginePaths.inspectImage(image), null, CALL_TIMEOUT);
    if (!inspected.ok()) {
      return OptionalLong.empty();
    }
    return OptionalLong.of(inspected.json().path("Size").asLong(0));
  }
}
