package dev.box.core.session;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.box.api.BoxCapacityExceededException;
import dev.box.api.BoxSessionConflictException;
import dev.box.api.BoxSnapshot;
import dev.box.core.backend.Foreground;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.UserDefinedFileAttributeView;
import java.time.Duration;
import java.time.Instant;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The btrfs workspace store on a real loop-mounted image (the data dir of the tests is on ext4):
 * forks and snapshots share the blocks of their source, and each side's later writes are its own.
 * Runs where the server could make the store (root, loop devices, btrfs-progs).
 */
class CopyOnWriteStoreTest {
  private static final int MIB = 1024 * 1024;
  private static final String MARK = "box.test";

  @TempDir Path stateDir;

  /**
   * The server's client work, whose spares wait for it for up to ten minutes: longer than a test.
   */
  private final Foreground foreground = new Foreground(Duration.ofMinutes(10));

  private BtrfsStore cow;
  private WorkspaceStore workspaces;
  private SnapshotStore snapshots;

  @BeforeEach
  void open() {
    cow = new BtrfsStore(stateDir, 4, foreground);
    assumeTrue(cow.unavailable() == null, () -> "no btrfs store here: " + cow.unavailable());
    workspaces = new WorkspaceStore(stateDir, cow);
    snapshots = new SnapshotStore(stateDir, cow, () -> 2);
  }

  @AfterEach
  void close() {
    workspaces.close();
  }

  @Test
  void aForkOf64MiB_sharesItsBlocks_andThenDiverges() throws IOException {
    Path source = workspaces.create("test_source-1", 0, null);
    writeRandom(source.resolve("data.bin"), 64);
    Files.writeString(source.resolve("note.txt"), "before");
    long usedBefore = used(source);

    Path fork = workspaces.create("test_fork-2", 0, () -> source);

    assertThat(Files.mismatch(source.resolve("data.bin"), fork.resolve("data.bin"))).isEqualTo(-1);
    assertThat(used(fork) - usedBefore).isLessThan(4L * MIB);
    Files.writeString(source.resolve("note.txt"), "source");
    Files.writeString(fork.resolve("note.txt"), "fork");
    assertThat(Files.readString(source.resolve("note.txt"))).isEqualTo("source");
    assertThat(Files.readString(fork.resolve("note.txt"))).isEqualTo("fork");

    workspaces.remove(fork);
    assertThat(fork).doesNotExist();
    assertThat(source.resolve("data.bin")).exists();
  }

  @Test
  void aSnapshot_isReadOnly_keepsItsFiles_andRestoresIntoANewWorkspace() throws IOException {
    Path source = workspaces.create("test_source-1", 0, null);
    writeRandom(source.resolve("data.bin"), 64);
    Files.writeString(source.resolve("note.txt"), "kept");
    long usedBefore = used(source);

    BoxSnapshot snapshot = snapshots.take("base", "source", source, Instant.EPOCH, null);
    Files.writeString(source.resolve("note.txt"), "changed");

    assertThat(snapshot.sizeBytes()).isEqualTo(64L * MIB + 4);
    assertThat(used(source) - usedBefore).isLessThan(4L * MIB);
    Path files = snapshots.files("base");
    assertThatThrownBy(() -> Files.writeString(files.resolve("note.txt"), "x"))
        .isInstanceOf(IOException.class);
    Path restored = workspaces.create("test_restored-3", 0, () -> snapshots.files("base"));
    assertThat(Files.readString(restored.resolve("note.txt"))).isEqualTo("kept");
    Files.writeString(restored.resolve("note.txt"), "mine");
    assertThat(Files.readString(files.resolve("note.txt"))).isEqualTo("kept");
  }

  @Test
  void snapshots_areBoundedAndNamedOnce() throws IOException {
    Path source = workspaces.create("test_source-1", 0, null);
    snapshots.take("one", "source", source, Instant.EPOCH, null);

    assertThatThrownBy(() -> snapshots.take("one", "source", source, Instant.EPOCH, null))
        .isInstanceOf(BoxSessionConflictException.class);
    snapshots.take("two", "source", source, Instant.EPOCH, null);
    assertThatThrownBy(() -> snapshots.take("three", "source", source, Instant.EPOCH, null))
        .isInstanceOf(BoxCapacityExceededException.class)
        .hasMessageContaining("max_snapshots 2");
    snapshots.delete("one");
    assertThat(snapshots.list()).extracting(BoxSnapshot::name).containsExactly("two");
  }

  @Test
  void aWorkspaceLeftAsADirectory_isForkedByCopy() throws IOException {
    Path old = stateDir.resolve("workspaces").resolve("test_old-1");
    Files.createDirectories(old.resolve("sub"));
    Files.writeString(old.resolve("sub/file.txt"), "old");
    Files.createSymbolicLink(old.resolve("link"), Path.of("/etc/hostname"));

    Path reused = workspaces.create("test_old-1", 0, null);
    Path fork = workspaces.create("test_fork-2", 0, () -> reused);

    assertThat(reused).isEqualTo(old.toRealPath());
    assertThat(cow.holds(fork)).isTrue();
    assertThat(Files.readString(fork.resolve("sub/file.txt"))).isEqualTo("old");
    assertThat(Files.isSymbolicLink(fork.resolve("link"))).isTrue();
  }

  @Test
  void aNewWorkspace_isASpareSubvolumeMadeAhead_andTheSparesAreMadeUpAgain() throws IOException {
    workspaces.create("test_first-1", 0, null);
    await().atMost(Duration.ofSeconds(30)).until(() -> cow.spares().size() == BtrfsStore.SPARES);
    Path spare = cow.spares().getFirst();
    Object spareDevice = device(spare);

    Path workspace = workspaces.create("test_second-2", 0, null);

    assertThat(spare).doesNotExist();
    assertThat(device(workspace)).isEqualTo(spareDevice);
    assertThat(cow.holds(workspace)).isTrue();
    try (Stream<Path> files = Files.list(workspace)) {
      assertThat(files).isEmpty();
    }
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> cow.spares().size() == BtrfsStore.SPARES && !cow.spares().contains(spare));
  }

  @Test
  void whileASpareIsLeft_theOneThatReplacesATakenOne_waitsForTheClientWorkUnderWay()
      throws IOException {
    workspaces.create("test_first-1", 0, null);
    await().atMost(Duration.ofSeconds(30)).until(() -> cow.spares().size() == BtrfsStore.SPARES);

    try (Foreground.Work create = foreground.begin()) {
      workspaces.create("test_second-2", 0, null);
      await()
          .during(Duration.ofMillis(500))
          .atMost(Duration.ofSeconds(5))
          .until(() -> cow.spares().size() == BtrfsStore.SPARES - 1);
    }
    await().atMost(Duration.ofSeconds(30)).until(() -> cow.spares().size() == BtrfsStore.SPARES);
  }

  @Test
  void onceNoSpareIsLeft_oneIsMadeAtOnce_whateverClientWorkIsUnderWay() throws IOException {
    workspaces.create("test_first-1", 0, null);
    await().atMost(Duration.ofSeconds(30)).until(() -> cow.spares().size() == BtrfsStore.SPARES);

    try (Foreground.Work creates = foreground.begin()) {
      for (int i = 0; i < BtrfsStore.SPARES; i++) {
        workspaces.create("test_next-" + i, 0, null);
      }
      await().atMost(Duration.ofSeconds(30)).until(() -> cow.spares().size() == 1);
    }
    await().atMost(Duration.ofSeconds(30)).until(() -> cow.spares().size() == BtrfsStore.SPARES);
  }

  @Test
  void theSparesOfAnEarlierStore_areTakenAgain_andAnythingElseInTheirPlaceIsRemoved()
      throws IOException {
    workspaces.create("test_first-1", 0, null);
    await().atMost(Duration.ofSeconds(30)).until(() -> cow.spares().size() == BtrfsStore.SPARES);
    Path kept = cow.spares().get(0);
    Path written = cow.spares().get(1);
    Files.writeString(written.resolve("left.txt"), "not empty");
    Path plain = kept.resolveSibling("plain");
    Files.createDirectories(plain.resolve("sub"));
    Files.createSymbolicLink(plain.resolve("sub/link"), stateDir);
    mark(kept, "kept");
    workspaces.close();

    cow = new BtrfsStore(stateDir, 4, foreground);
    workspaces = new WorkspaceStore(stateDir, cow);
    Path workspace = workspaces.create("test_second-2", 0, null);

    assertThat(mark(workspace)).isEqualTo("kept");
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> !Files.exists(written) && !Files.exists(plain));
    assertThat(stateDir).isDirectory();
    await().atMost(Duration.ofSeconds(30)).until(() -> cow.spares().size() == BtrfsStore.SPARES);
    try (Stream<Path> left = Files.list(kept.getParent())) {
      assertThat(left).containsExactlyInAnyOrderElementsOf(cow.spares());
    }
  }

  /** Marks {@code dir} with {@code text} in an extended attribute, which a rename keeps. */
  private static void mark(Path dir, String text) throws IOException {
    Files.getFileAttributeView(dir, UserDefinedFileAttributeView.class)
        .write(MARK, ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8)));
  }

  private static String mark(Path dir) throws IOException {
    UserDefinedFileAttributeView view =
        Files.getFileAttributeView(dir, UserDefinedFileAttributeView.class);
    ByteBuffer text = ByteBuffer.allocate(view.size(MARK));
    view.read(MARK, text);
    return new String(text.array(), StandardCharsets.UTF_8);
  }

  /** The device of {@code dir}: each btrfs subvolume has its own while it is mounted. */
  private static Object device(Path dir) throws IOException {
    return Files.getAttribute(dir, "unix:dev", LinkOption.NOFOLLOW_LINKS);
  }

  /** The bytes the file system of {@code dir} has allocated, once its writes are on disk. */
  private static long used(Path dir) throws IOException {
    sync(dir);
    FileStore store = Files.getFileStore(dir);
    return store.getTotalSpace() - store.getUnallocatedSpace();
  }

  private static void sync(Path dir) throws IOException {
    try {
      Process sync = new ProcessBuilder("sync", "-f", dir.toString()).start();
      assertThat(sync.waitFor()).isZero();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException(e);
    }
  }

  private static void writeRandom(Path file, int mebibytes) throws IOException {
    Random random = new Random(42);
    byte[] chunk = new byte[MIB];
    try (OutputStream out = Files.newOutputStream(file)) {
      for (int i = 0; i < mebibytes; i++) {
        random.nextBytes(chunk);
        out.write(chunk);
      }
    }
  }
}
