package dev.box.e2b.server;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
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
import java.util.Map;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What E2B's API knows of each sandbox beyond its session, kept so that a sandbox outlives a
 * restart of the server as its (persistent) session does: one JSON file per sandbox in {@code
 * <state dir>/e2b-sandboxes/}, mode 0600 since it holds the envd access token, written whole or not
 * at all ({@link StateFiles}). A file that cannot be read is set aside with the suffix {@code
 * .unreadable} and named in the log.
 */
final class SandboxRecords {
  private static final Logger log = LoggerFactory.getLogger(SandboxRecords.class);
  private static final int VERSION = 1;
  private static final String SUFFIX = ".json";
  private static final long MAX_RECORD_BYTES = 1024 * 1024;
  private static final Pattern ID = Pattern.compile("[a-z0-9]{1,64}");
  private static final TypeReference<Map<String, String>> STRINGS = new TypeReference<>() {};

  private final Path dir;
  private final ObjectMapper mapper;

  SandboxRecords(Path stateDir, ObjectMapper mapper) {
    this.dir = stateDir.resolve("e2b-sandboxes");
    this.mapper = mapper;
  }

  /** Records {@code sandbox}, replacing its earlier record; a failure is logged. */
  void save(E2bSandbox sandbox) {
    ObjectNode record = mapper.createObjectNode();
    record.put("version", VERSION);
    record.put("sandbox_id", sandbox.sandboxId());
    record.set("spec", mapper.valueToTree(sandbox.spec()));
    record.put("template_id", sandbox.templateId());
    record.set("metadata", mapper.valueToTree(sandbox.metadata()));
    record.set("env_vars", mapper.valueToTree(sandbox.envVars()));
    record.put("access_token", sandbox.accessToken());
    record.put("started_at", sandbox.startedAt().toString());
    record.put("end_at", sandbox.endAt().toString());
    try {
      StateFiles.replace(fileOf(sandbox.sandboxId()), mapper.writeValueAsBytes(record));
    } catch (IOException e) {
      log.warn(
          "E2B sandbox {} could not be recorded ({}): it ends with this server",
          sandbox.sandboxId(),
          e.toString());
    }
  }

  /** Forgets the sandbox {@code sandboxId}; a failure is logged. */
  void remove(String sandboxId) {
    try {
      if (Files.deleteIfExists(fileOf(sandboxId))) {
        StateFiles.syncDirectory(dir);
      }
    } catch (IOException e) {
      log.warn("the record of E2B sandbox {} could not be removed: {}", sandboxId, e.toString());
    }
  }

  /** Every readable record, each with no process and no watch. */
  List<E2bSandbox> load() {
    List<E2bSandbox> sandboxes = new ArrayList<>();
    if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
      return sandboxes;
    }
    try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*" + SUFFIX)) {
      for (Path file : files) {
        try {
          sandboxes.add(read(file));
        } catch (IOException | RuntimeException e) {
          Path aside = file.resolveSibling(file.getFileName() + ".unreadable");
          log.error("E2B sandbox record {} cannot be read ({}); set aside", file, e.getMessage());
          Files.move(file, aside, StandardCopyOption.REPLACE_EXISTING);
        }
      }
    } catch (IOException e) {
      log.error("cannot list E2B sandbox records in {}: {}", dir, e.toString());
    }
    return sandboxes;
  }

  private E2bSandbox read(Path file) throws IOException {
    if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)
        || Files.size(file) > MAX_RECORD_BYTES) {
      throw new IOException("not a regular file of at most " + MAX_RECORD_BYTES + " bytes");
    }
    JsonNode record = mapper.readTree(Files.readAllBytes(file));
    if (record.path("version").asInt(-1) != VERSION) {
      throw new IOException("format version " + record.path("version") + " is not " + VERSION);
    }
    String id = record.path("sandbox_id").asText();
    if (!file.equals(fileOf(id))) {
      throw new IOException("it does not describe the sandbox its name says");
    }
    return new E2bSandbox(
        id,
        mapper.treeToValue(record.path("spec"), BoxSpec.class),
        record.path("template_id").asText(),
        mapper.convertValue(record.path("metadata"), STRINGS),
        mapper.convertValue(record.path("env_vars"), STRINGS),
        record.path("access_token").asText(),
        Instant.parse(record.path("started_at").asText()),
        Instant.parse(record.path("end_at").asText()),
        new ProcessTable(),
        new WatchTable(),
        new SandboxLog());
  }

  private Path fileOf(String sandboxId) {
    if (!ID.matcher(sandboxId).matches()) {
      throw new IllegalArgumentException("not a sandbox id: " + sandboxId);
    }
    return dir.resolve(sandboxId + SUFFIX);
  }
}
