package dev.box.langbot;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntSupplier;
import java.util.regex.Pattern;

/**
 * The files LangBot sends with {@code __file_chunk} (its chunked file transfer, which uploads skill
 * ZIPs), stored under a directory of their own, by key: the first chunk truncates the file, each
 * later one appends in order, and the last one ends the transfer.
 *
 * <p>The skill ZIP actions read a finished file and delete it; a file no action reads stays on disk
 * until a new transfer under the same key replaces it.
 *
 * <p>Thread-safe: transfers of different keys run in parallel; the chunks of one key are written
 * one at a time.
 */
final class RpcFiles {
  /** Most transfers that may be in progress at once. */
  static final int MAX_ACTIVE = 128;

  private static final Pattern KEY = Pattern.compile("^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$");

  private final Path root;
  private final IntSupplier maxBytes;
  private final Map<String, Transfer> active = new ConcurrentHashMap<>();

  /**
   * A store under {@code root}, created on first use.
   *
   * @param maxBytes the current {@code box.limits.max_rpc_file_bytes}, read for every chunk
   */
  RpcFiles(Path root, IntSupplier maxBytes) {
    this.root = root.toAbsolutePath().normalize();
    this.maxBytes = maxBytes;
  }

  /**
   * Writes one chunk.
   *
   * @throws ActionError {@code BoxValidationError} for a bad key, a size over the limit, a chunk
   *     out of order or invalid base64 (the transfer is then abandoned and its file deleted);
   *     {@code BoxCapacityExceededError} when {@value #MAX_ACTIVE} other transfers are in progress
   */
  void receive(JsonNode data) throws IOException {
    String key = text(data, "file_key");
    if (!KEY.matcher(key).matches()) {
      throw invalid("invalid file_key " + quoted(key) + ": must match " + KEY.pattern());
    }
    long length = number(data, "file_length");
    int index = (int) number(data, "chunk_index");
    int amount = (int) number(data, "chunk_amount");
    int max = maxBytes.getAsInt();
    if (length < 0 || length > max) {
      throw invalid(
          "file " + key + " is " + length + " bytes, over max_rpc_file_bytes (" + max + ")");
    }
    if (amount < 1 || index < 0 || index >= amount) {
      throw invalid(
          "chunk_index " + index + " of file " + key + " is outside chunk_amount " + amount);
    }
    Path file = fileOf(key);
    Transfer transfer = index == 0 ? begin(key, amount) : active.get(key);
    if (transfer == null) {
      throw invalid("chunk " + index + " of file " + key + " is out of order (expected 0)");
    }
    synchronized (transfer) {
      try {
        write(transfer, file, key, index, amount, length, max, data);
      } catch (IOException | RuntimeException e) {
        abandon(key, transfer, file);
        throw e;
      }
      if (index == amount - 1) {
        active.remove(key, transfer);
      }
    }
  }

  /** Where the file of {@code key} is stored; for the skill ZIP actions that read it. */
  Path fileOf(String key) {
    if (!KEY.matcher(key).matches()) {
      throw invalid("invalid file_key " + quoted(key) + ": must match " + KEY.pattern());
    }
    Path file = root.resolve(key).normalize();
    if (!root.equals(file.getParent())) {
      throw invalid("file_key " + quoted(key) + " escapes the file directory");
    }
    return file;
  }

  /** How many transfers are in progress. */
  int activeTransfers() {
    return active.size();
  }

  private Transfer begin(String key, int amount) throws IOException {
    Files.createDirectories(root);
    Transfer fresh = new Transfer(amount);
    synchronized (active) {
      if (!active.containsKey(key) && active.size() >= MAX_ACTIVE) {
        throw new ActionError(
            "BoxCapacityExceededError", "too many active file transfers (max " + MAX_ACTIVE + ")");
      }
      active.put(key, fresh);
    }
    return fresh;
  }

  private void write(
      Transfer transfer,
      Path file,
      String key,
      int index,
      int amount,
      long length,
      int max,
      JsonNode data)
      throws IOException {
    if (transfer.next != index || transfer.amount != amount) {
      throw invalid(
          "chunk "
              + index
              + " of file "
              + key
              + " is out of order (expected "
              + transfer.next
              + " of "
              + transfer.amount
              + ")");
    }
    byte[] bytes;
    try {
      bytes = Base64.getDecoder().decode(text(data, "chunk_base64"));
    } catch (IllegalArgumentException e) {
      throw invalid("chunk " + index + " of file " + key + " is not valid base64");
    }
    long written = transfer.written + bytes.length;
    if (written > Math.min(length, max)) {
      throw invalid(
          "file "
              + key
              + " exceeds "
              + (written > max ? "max_rpc_file_bytes (" + max + ")" : "its file_length")
              + " at chunk "
              + index);
    }
    if (index == amount - 1 && written != length) {
      throw invalid(
          "file " + key + " ended at " + written + " bytes, not its file_length " + length);
    }
    if (Files.isSymbolicLink(file)) {
      throw invalid("file_key " + quoted(key) + " names a symbolic link");
    }
    if (index == 0) {
      Files.write(
          file,
          bytes,
          StandardOpenOption.CREATE,
          StandardOpenOption.TRUNCATE_EXISTING,
          StandardOpenOption.WRITE,
          LinkOption.NOFOLLOW_LINKS);
    } else {
      Files.write(file, bytes, StandardOpenOption.APPEND, LinkOption.NOFOLLOW_LINKS);
    }
    transfer.written = written;
    transfer.next++;
  }

  private void abandon(String key, Transfer transfer, Path file) throws IOException {
    if (active.remove(key, transfer)) {
      Files.deleteIfExists(file);
    }
  }

  private static String text(JsonNode data, String key) {
    JsonNode value = data.get(key);
    if (value == null || value.isNull()) {
      throw ActionError.missingKey(key);
    }
    if (!value.isTextual()) {
      throw invalid(key + " must be a string");
    }
    return value.asText();
  }

  private static long number(JsonNode data, String key) {
    JsonNode value = data.get(key);
    if (value == null || value.isNull()) {
      throw ActionError.missingKey(key);
    }
    if (!value.isIntegralNumber() || !value.canConvertToInt()) {
      throw invalid(key + " must be an integer");
    }
    return value.asLong();
  }

  private static String quoted(String key) {
    return "'" + key + "'";
  }

  private static ActionError invalid(String message) {
    return new ActionError("BoxValidationError", message);
  }

  /** One file in progress; guarded by its own monitor. */
  private static final class Transfer {
    final int amount;
    int next;
    long written;

    Transfer(int amount) {
      this.amount = amount;
    }
  }
}
