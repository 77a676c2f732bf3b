package dev.box.e2b.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.core.Hashes;
import dev.box.core.StateFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * The API keys Box issues for E2B's control plane ({@code X-API-Key}, the SDK's {@code
 * E2B_API_KEY}), beside the control token: a key can be given to code that runs E2B's SDK and be
 * revoked alone, without handing out the control token.
 *
 * <p>A key is {@code e2b_} and 40 hex digits (160 random bits), shown once when it is issued. Only
 * its SHA-256 digest is kept, with its id, name and time, in one file of the server's state
 * directory (mode 0600, replaced by an atomic rename), so keys survive a restart. A presented key
 * is compared digest to digest against every key, in time independent of where they differ.
 * Thread-safe.
 */
final class ApiKeys {
  /** The most keys a server keeps. */
  static final int MAX_KEYS = 1000;

  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9 ._-]{0,63}");
  private static final int VERSION = 1;

  private final Path file;
  private final ObjectMapper mapper;
  private final Map<String, Key> byId = new LinkedHashMap<>();

  /** A key as it is kept: never the key itself. */
  record Key(String id, String name, Instant createdAt, byte[] digest) {}

  /** A key just issued: the only time {@code key} is known. */
  record Issued(Key key, String secret) {}

  private ApiKeys(Path file, ObjectMapper mapper) {
    this.file = file;
    this.mapper = mapper;
  }

  /**
   * The keys kept in {@code file}, none when it does not exist.
   *
   * @throws IllegalStateException with a message for the operator when the file cannot be read
   */
  static ApiKeys open(Path file, ObjectMapper mapper) {
    ApiKeys keys = new ApiKeys(file, mapper);
    try {
      JsonNode root = mapper.readTree(Files.readAllBytes(file));
      for (JsonNode node : root.path("keys")) {
        Key key =
            new Key(
                node.path("id").asText(),
                node.path("name").asText(),
                Instant.parse(node.path("created_at").asText()),
                HexFormat.of().parseHex(node.path("sha256").asText()));
        keys.byId.put(key.id(), key);
      }
    } catch (NoSuchFileException e) {
      return keys;
    } catch (IOException | RuntimeException e) {
      throw new IllegalStateException("cannot read E2B's API keys from " + file + ": " + e, e);
    }
    return keys;
  }

  /**
   * Issues a key named {@code name}.
   *
   * @throws BoxException a validation error for a bad name; capacity exceeded when {@link
   *     #MAX_KEYS} are kept
   */
  synchronized Issued issue(@Nullable String name, Instant now) {
    if (name == null || !NAME.matcher(name).matches()) {
      throw new BoxException(
          BoxErrorCode.VALIDATION_ERROR,
          "name must be 1 to 64 letters, digits, spaces, '.', '_' or '-', starting with a letter"
              + " or digit");
    }
    if (byId.size() >= MAX_KEYS) {
      throw new BoxException(
          BoxErrorCode.CAPACITY_EXCEEDED,
          "a server keeps at most " + MAX_KEYS + " API keys: revoke one first");
    }
    String secret = "e2b_" + Secrets.hex(20);
    Key key = new Key("key_" + Secrets.hex(8), name, now, Hashes.sha256(secret));
    byId.put(key.id(), key);
    save();
    return new Issued(key, secret);
  }

  /** Every key, oldest first. */
  synchronized List<Key> list() {
    return new ArrayList<>(byId.values());
  }

  /** Revokes key {@code id}; whether there was one. */
  synchronized boolean revoke(String id) {
    Key removed = byId.remove(id);
    if (removed == null) {
      return false;
    }
    save();
    return true;
  }

  /** Whether {@code presented} is a key this server issued and has not revoked. */
  synchronized boolean accepts(@Nullable String presented) {
    if (presented == null || presented.isEmpty()) {
      return false;
    }
    byte[] given = Hashes.sha256(presented);
    boolean match = false;
    for (Key key : byId.values()) {
      match |= MessageDigest.isEqual(key.digest(), given);
    }
    return match;
  }

  private void save() {
    ObjectNode root = mapper.createObjectNode();
    root.put("version", VERSION);
    ArrayNode list = root.putArray("keys");
    for (Key key : byId.values()) {
      list.addObject()
          .put("id", key.id())
          .put("name", key.name())
          .put("created_at", key.createdAt().toString())
          .put("sha256", HexFormat.of().formatHex(key.digest()));
    }
    try {
      StateFiles.replace(file, mapper.writeValueAsBytes(root));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write E2B's API keys to " + file, e);
    }
  }
}
