package dev.box.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.BoxExecutionResult;
import dev.box.api.BoxFileEntry;
import dev.box.api.BoxFileType;
import dev.box.api.BoxSessionNotFoundException;
import dev.box.api.BoxSpec;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** {@link BoxFiles} against a real server with real bubblewrap sandboxes. */
class BoxFilesTest {
  @RegisterExtension
  static final LiveBox box =
      LiveBox.perClass("max_file_bytes", "65536", "max_archive_bytes", "65536");

  @TempDir Path local;

  private static byte[] bytes(int size) {
    byte[] data = new byte[size];
    for (int i = 0; i < size; i++) {
      data[i] = (byte) (i * 7 + i / 256);
    }
    return data;
  }

  private static BoxFiles files() {
    return box.client().files();
  }

  private static String sh(String session, String cmd) {
    BoxExecutionResult result = box.client().exec(BoxSpec.builder(session).cmd(cmd).build());
    return result.stdout();
  }

  @Test
  void streams_roundTripBinaryData() throws IOException {
    box.client().createSession(BoxSpec.builder("streams").build());
    byte[] data = bytes(50_000);

    var written = files().write("streams", "in/data.bin", new ByteArrayInputStream(data));
    byte[] read;
    try (InputStream in = files().open("streams", "/workspace/in/data.bin")) {
      read = in.readAllBytes();
    }

    assertThat(written.path()).isEqualTo("/workspace/in/data.bin");
    assertThat(written.size()).isEqualTo(data.length);
    assertThat(read).isEqualTo(data);
  }

  @Test
  void localFiles_uploadAndDownload_andListAndDeleteSeeThem() throws IOException {
    box.client().createSession(BoxSpec.builder("local").build());
    Path source = Files.write(local.resolve("source.bin"), bytes(30_000));

    files().upload("local", source, "/workspace/d/f.bin");
    long size = files().download("local", "d/f.bin", local.resolve("copy.bin"));
    var listing = files().list("local", "d");
    files().delete("local", "d");

    assertThat(size).isEqualTo(30_000);
    assertThat(Files.readAllBytes(local.resolve("copy.bin"))).isEqualTo(bytes(30_000));
    assertThat(listing.entries())
        .extracting(BoxFileEntry::name, BoxFileEntry::type, BoxFileEntry::size)
        .containsExactly(org.assertj.core.groups.Tuple.tuple("f.bin", BoxFileType.FILE, 30_000L));
    assertThat(sh("local", "ls -A /workspace")).isEmpty();
  }

  @Test
  void archive_persistsAndHydrates() {
    box.client().createSession(BoxSpec.builder("tar-a").build());
    box.client().createSession(BoxSpec.builder("tar-b").build());
    sh(
        "tar-a",
        "mkdir -p /workspace/w/x && echo one > /workspace/w/x/one && ln -s x/one /workspace/w/l");
    Path tar = local.resolve("w.tar");

    files().downloadArchive("tar-a", "w", tar);
    var extracted = files().uploadArchive("tar-b", tar, "/workspace/w2");

    assertThat(extracted.entries()).isEqualTo(4);
    assertThat(sh("tar-b", "cat /workspace/w2/x/one /workspace/w2/l; readlink /workspace/w2/l"))
        .isEqualTo("one\none\nx/one\n");
  }

  @Test
  void errors_carryTheServersCodes_andAFailedDownloadLeavesNoFile() {
    box.client().createSession(BoxSpec.builder("errors").build());
    sh("errors", "head -c 70000 /dev/zero > /workspace/big");
    Path target = local.resolve("never");

    assertThatThrownBy(() -> files().download("errors", "missing", target))
        .isInstanceOf(BoxException.class)
        .extracting(e -> ((BoxException) e).code())
        .isEqualTo(BoxErrorCode.FILE_NOT_FOUND);
    assertThatThrownBy(() -> files().open("errors", "big"))
        .extracting(e -> ((BoxException) e).code())
        .isEqualTo(BoxErrorCode.PAYLOAD_TOO_LARGE);
    assertThatThrownBy(
            () -> files().write("errors", "big2", new ByteArrayInputStream(new byte[70_000])))
        .extracting(e -> ((BoxException) e).code())
        .isEqualTo(BoxErrorCode.PAYLOAD_TOO_LARGE);
    assertThatThrownBy(() -> files().list("no-such-session", "/"))
        .isInstanceOf(BoxSessionNotFoundException.class);
    assertThat(local).isEmptyDirectory();
  }

  /**
   * A local file far larger than the server takes is refused before it is sent: the client asks
   * first ({@code Expect: 100-continue}), so the answer is the server's 413, not a connection the
   * server closed under a client still writing 64 MiB.
   */
  @Test
  void anUploadRefusedUpFront_isNeverSent_andAnswersWithTheServersError() throws IOException {
    box.client().createSession(BoxSpec.builder("upfront").build());
    Path huge = Files.createTempFile("box-huge-", ".bin");
    try {
      try (RandomAccessFile file = new RandomAccessFile(huge.toFile(), "rw")) {
        file.setLength(64L * 1024 * 1024);
      }
      for (int i = 0; i < 3; i++) {
        assertThatThrownBy(() -> files().upload("upfront", huge, "huge"))
            .extracting(e -> ((BoxException) e).code())
            .isEqualTo(BoxErrorCode.PAYLOAD_TOO_LARGE);
        assertThatThrownBy(() -> files().uploadArchive("upfront", huge, "/workspace/h"))
            .extracting(e -> ((BoxException) e).code())
            .isEqualTo(BoxErrorCode.PAYLOAD_TOO_LARGE);
      }
      assertThat(sh("upfront", "ls -A /workspace")).isEmpty();
    } finally {
      Files.delete(huge);
    }
  }
}
