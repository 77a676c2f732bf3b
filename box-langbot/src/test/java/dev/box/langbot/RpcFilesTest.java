package dev.box.langbot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.box.api.BoxJson;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import org.assertj.core.api.AbstractStringAssert;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code __file_chunk} as LangBot sends it (16 KiB chunks, the first truncating, each later one
 * appending), on a real directory.
 */
class RpcFilesTest {
  private static final ObjectMapper JSON = BoxJson.newMapper();
  private static final String KEY = "0123456789abcdef-0a1b2c.zip";

  @TempDir Path dataDir;

  private RpcFiles files(int maxBytes) {
    return new RpcFiles(dataDir.resolve("rpc-files"), () -> maxBytes);
  }

  private static ObjectNode chunk(String key, long length, String raw, int index, int amount) {
    return encodedChunk(
        key,
        length,
        Base64.getEncoder().encodeToString(raw.getBytes(StandardCharsets.UTF_8)),
        index,
        amount);
  }

  private static ObjectNode encodedChunk(
      String key, long length, String base64, int index, int amount) {
    return JSON.createObjectNode()
        .put("file_key", key)
        .put("file_length", length)
        .put("chunk_base64", base64)
        .put("chunk_index", index)
        .put("chunk_amount", amount)
        .put("chunk_size", 16 * 1024);
  }

  /**
   * Fails unless receiving {@code chunk} is refused with an {@link ActionError} of {@code message};
   * returns an assertion on the error's LangBot class name.
   */
  private static AbstractStringAssert<?> assertRefused(
      RpcFiles files, ObjectNode chunk, String message) {
    ActionError error = catchThrowableOfType(ActionError.class, () -> files.receive(chunk));
    assertThat(error).as("refused").isNotNull().hasMessage(message);
    return assertThat(error.className());
  }

  /** Fails unless the transfer of {@link #KEY} is over and its file is gone. */
  private static void assertAbandoned(RpcFiles files) {
    assertThat(files.activeTransfers()).isZero();
    assertThat(Files.exists(files.fileOf(KEY))).isFalse();
  }

  @Test
  void chunks_areAppendedInOrder_andTheFirstTruncates() throws Exception {
    RpcFiles files = files(1024);
    Path file = dataDir.resolve("rpc-files").resolve(KEY);
    Files.createDirectories(file.getParent());
    Files.writeString(file, "an older and longer upload");

    files.receive(chunk(KEY, 11, "hello ", 0, 2));
    assertThat(files.activeTransfers()).isEqualTo(1);
    files.receive(chunk(KEY, 11, "world", 1, 2));

    assertThat(Files.readString(file)).isEqualTo("hello world");
    assertThat(files.fileOf(KEY)).isEqualTo(file.toAbsolutePath().normalize());
    assertThat(files.activeTransfers()).isZero();
  }

  @Test
  void badKeys_areRefused_andNothingIsWrittenOutsideTheDirectory() {
    RpcFiles files = files(1024);
    for (String key : new String[] {"../escape", ".hidden", "a/b", "", "x".repeat(256)}) {
      assertThatThrownBy(() -> files.receive(chunk(key, 1, "x", 0, 1)))
          .isInstanceOf(ActionError.class)
          .hasMessageStartingWith("invalid file_key")
          .extracting(e -> ((ActionError) e).className())
          .isEqualTo("BoxValidationError");
    }
    assertThat(Files.exists(dataDir.resolve("escape"))).isFalse();
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "8    | 9 | 123456789 | 0 | 1 | file %s is 9 bytes, over max_rpc_file_bytes (8)",
        "1024 | 3 | b         | 1 | 3 | chunk 1 of file %s is out of order (expected 0)",
      })
  void aChunkThatCannotStartATransfer_isRefused(
      int maxBytes, long length, String raw, int index, int amount, String message)
      throws Exception {
    RpcFiles files = files(maxBytes);
    assertRefused(files, chunk(KEY, length, raw, index, amount), message.formatted(KEY));
    assertAbandoned(files);
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "8    | 8 | 12345 | 67890 | 1 | 2 | file %s exceeds max_rpc_file_bytes (8) at chunk 1",
        "1024 | 3 | a     | c     | 2 | 3 | chunk 2 of file %s is out of order (expected 1 of 3)",
      })
  void aLaterChunkOverTheLimitOrOutOfOrder_abandonsTheTransfer(
      int maxBytes, long length, String first, String later, int index, int amount, String message)
      throws Exception {
    RpcFiles files = files(maxBytes);
    files.receive(chunk(KEY, length, first, 0, amount));

    assertRefused(files, chunk(KEY, length, later, index, amount), message.formatted(KEY));
    assertAbandoned(files);
  }

  @Test
  void invalidBase64_isAValidationError() {
    RpcFiles files = files(1024);
    assertRefused(
            files,
            encodedChunk(KEY, 3, "not base64!", 0, 1),
            "chunk 0 of file " + KEY + " is not valid base64")
        .isEqualTo("BoxValidationError");
  }

  @Test
  void atMost128Transfers_areActiveAtOnce() throws Exception {
    RpcFiles files = files(1024);
    for (int i = 0; i < RpcFiles.MAX_ACTIVE; i++) {
      files.receive(chunk("f" + i, 2, "a", 0, 2));
    }
    assertRefused(
            files, chunk("one-more", 2, "a", 0, 2), "too many active file transfers (max 128)")
        .isEqualTo("BoxCapacityExceededError");

    files.receive(chunk("f0", 2, "b", 1, 2));
    files.receive(chunk("one-more", 1, "a", 0, 1));
    assertThat(Files.readString(files.fileOf("one-more"))).isEqualTo("a");
  }

  @Test
  void aSymbolicLinkInTheDirectory_isNotFollowed() throws Exception {
    RpcFiles files = files(1024);
    Path outside = Files.writeString(dataDir.resolve("outside.txt"), "keep");
    Files.createDirectories(dataDir.resolve("rpc-files"));
    Files.createSymbolicLink(dataDir.resolve("rpc-files").resolve("link"), outside);

    assertRefused(files, chunk("link", 1, "x", 0, 1), "file_key 'link' names a symbolic link");
    assertThat(Files.readString(outside)).isEqualTo("keep");
  }
}
