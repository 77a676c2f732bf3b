package dev.box.core.session;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.box.api.BoxJson;
import dev.box.api.BoxSpec;
import dev.box.core.StateFiles;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The record of every persistent session, so that it survives a restart or a crash of the server:
 * one JSON file per session in {@code <state dir>/sessions/}, named like its workspace, holding the
 * format version, the session's spec, when it was created and, while it is paused, since when.
 *
 * <p>A file is written whole or not at all: to a temporary file, flushed to disk, renamed over the
 * old one, and the directory flushed, so that a crash at any instant leaves either the old record
 * or the new one. A file that cannot be read (written by hand, a disk error) is set aside with the
 * suffix {@code .unreadable} and named in the log, never silently dropped.
 */
final class PersistentSessions {
  private static final Logger log = LoggerFactory.getLogger(PersistentSessions.class);

  /** The format of the files; a newer one is set aside, not misread. */
  static final int VERSION = 1;

  private static final String SUFFIX = ".json";
  private static final long MAX_RECORD_BYTES = 1024 * 1024;

  /**
   * A persistent session as recorded: its spec, when it was first created, and since when it is
   * paused (null while it runs).
   */
  record Entry(BoxSpec spec, Instant createdAt, @Nullable Instant pausedAt) {}

  private final Path dir;
  private final ObjectMapper mapper = BoxJson.newMapper();

  PersistentSessions(Path stateDir) {
    this.dir = stateDir.resolve("sessions");
  }

  /** The file of the session {@code sessionId}. */
  Path fileOf(String sessionId) {
    return dir.resolve(SandboxNames.of(SandboxNames.PERSISTENT, sessionId) + SUFFIX);
  }

  /**
   * Records {@code spec}, paused since {@code pausedAt} (null: running), replacing an earlier
   * record of its id.
   *
   * @throws IOException when it cannot be written: the session is then not persistent
   */
  void save(BoxSpec spec, Instant createdAt, @Nullable Instant pausedAt) throws IOException {
    ObjectNode record = mapper.createObjectNode();
    record.put("version", VERSION);
    record.put("created_at", createdAt.toString());
    if (pausedAt != null) {
      record.put("paused_at", pausedAt.toString());
    }
    record.set("spec", mapper.valueToTree(spec));
    byte[] bytes = mapper.writerWithDefaultPrettyPrinter().writeValueAsBytes(record);
    StateFiles.replace(fileOf(spec.sessionId()), bytes);
  }

  /** Forgets the session {@code sessionId}; a failure is logged. */
  void remove(String sessionId) {
    try {
      if (Files.deleteIfExists(fileOf(sessionId))) {
        StateFiles.syncDirectory(dir);
      }
    } catch (IOException e) {
      log.warn("could not remove the record of persistent session {}: {}", sessionId, e.toString());
    }
  }

  /** Whether a workspace of that name belongs to a recorded session. */
  boolean recordsWorkspace(String workspaceName) {
    return Files.isRegularFile(dir.resolve(workspaceName + SUFFIX), LinkOption.NOFOLLOW_LINKS);
  }

  /** Every readable record; leftovers of interrupted writes are removed, bad ones set aside. */
  List<Entry> load() {
    List<Entry> entries = new ArrayList<>();
    if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
      return entries;
    }
    try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
      for (Path file : files) {
        String name = file.getFileName().toString();
        if (name.startsWith(".") && name.endsWith(".tmp")) {
          Files.deleteIfExists(file);
        } else if (name.endsWith(SUFFIX)) {
          try {
            entries.add(read(file));
          } catch (IOException | RuntimeException e) {
            Path aside = file.resolveSibling(name + ".unreadable");
            log.error(
                "persistent session record {} cannot be read ({}); set aside as {}",
                file,
                e.getMessage(),
                aside.getFileName());
            Files.move(file, aside, StandardCopyOption.REPLACE_EXISTING);
          }
        }
      }
    } catch (IOException e) {
      log.error("cannot list persistent session records in {}: {}", dir, e.toString());
    }
    return entries;
  }

  private Entry read(Path file) throws IOException {
    if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
      throw new IOException("not a regular file");
    }
    if (Files.size(file) > MAX_RECORD_BYTES) {
      throw new IOException("larger than " + MAX_RECORD_BYTES + " bytes");
    }
    JsonNode record = mapper.readTree(Files.readAllBytes(file));
    int version = record.path("version").asInt(-1);
    if (version != VERSION) {
      throw new IOException("format version " + version + " is not " + VERSION);
    }
    BoxSpec spec = mapper.treeToValue(record.path("spec"), BoxSpec.class);
    if (!spec.persistent() || !file.equals(fileOf(spec.sessionId()))) {
      throw new IOException("it does not describe the persistent session its name says");
    }
    JsonNode paused = record.path("paused_at");
    return new Entry(
        spec,
        Instant.parse(record.path("created_at").asText()),
        paused.isTextual() ? Instant.parse(paused.asText()) : null);
  }
}
