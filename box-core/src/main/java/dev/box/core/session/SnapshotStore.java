package dev.box.core.session;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.box.api.BoxCapacityExceededException;
import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.BoxJson;
import dev.box.api.BoxSessionConflictException;
import dev.box.api.BoxSnapshot;
import dev.box.api.internal.FileTrees;
import dev.box.core.StateFiles;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.IntSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The snapshots of workspaces: immutable copies kept by name until deleted, across restarts, and
 * never swept as orphans.
 *
 * <p>A snapshot is a record {@code snapshots/<name>.json} (a {@link BoxSnapshot}, and the {@link
 * SnapshotRoot} of a session whose writable root the backend copied) and its files: a read-only
 * subvolume {@code store/snapshots/<name>} of the {@link BtrfsStore} where there is one, else a
 * directory {@code snapshot-data/<name>}. The record is written last and removed first, so a crash
 * leaves files (or a root's copy) without a record at worst, which the next start removes. Taking,
 * listing and deleting are serialised: at most {@code max_snapshots} exist.
 */
final class SnapshotStore {
  private static final Logger log = LoggerFactory.getLogger(SnapshotStore.class);
  private static final String SUFFIX = ".json";
  private static final String AREA = "snapshots";
  private static final long MAX_RECORD_BYTES = 64 * 1024;

  private final Path records;
  private final Path copies;
  private final BtrfsStore cow;
  private final IntSupplier max;
  private final ObjectMapper mapper = BoxJson.newMapper();

  /**
   * @param stateDir the state dir
   * @param cow the btrfs store, used where it is available
   * @param max the most snapshots kept, read at every snapshot
   */
  SnapshotStore(Path stateDir, BtrfsStore cow, IntSupplier max) {
    this.records = stateDir.resolve(AREA);
    this.copies = stateDir.resolve("snapshot-data");
    this.cow = cow;
    this.max = max;
  }

  /** Keeps the copy of a session's writable root for a snapshot, and drops it again. */
  interface RootKeeper {
    /** Keeps the copy; called once the name is known to be free and the files are copied. */
    SnapshotRoot keep();

    /** Drops the copy {@link #keep} made: the snapshot could not be recorded. */
    void drop(SnapshotRoot root);
  }

  /**
   * Takes the snapshot {@code name} of the workspace {@code workspace} of session {@code
   * sessionId}, at {@code now}, with the copy of its writable root that {@code root} keeps, if any.
   *
   * @throws BoxSessionConflictException when a snapshot of that name exists
   * @throws BoxCapacityExceededException when {@code max_snapshots} exist
   */
  synchronized BoxSnapshot take(
      String name, String sessionId, Path workspace, Instant now, @Nullable RootKeeper root)
      throws IOException {
    BoxSnapshot.checkName("name", name);
    if (Files.exists(recordOf(name), LinkOption.NOFOLLOW_LINKS)) {
      throw new BoxSessionConflictException("snapshot " + name + " already exists");
    }
    int count = names().size();
    if (count >= max.getAsInt()) {
      throw new BoxCapacityExceededException(
          "snapshot capacity reached (max_snapshots " + max.getAsInt() + "): delete one first");
    }
    Path data = copy(name, workspace);
    SnapshotRoot kept = null;
    try {
      kept = root == null ? null : root.keep();
      BoxSnapshot snapshot = new BoxSnapshot(name, sessionId, now, sizeOf(data));
      Files.createDirectories(records);
      StateFiles.replace(recordOf(name), mapper.writeValueAsBytes(Record.of(snapshot, kept)));
      log.info("took snapshot {} of session {}", name, sessionId);
      return snapshot;
    } catch (IOException | RuntimeException e) {
      if (kept != null && root != null) {
        root.drop(kept);
      }
      removeData(data);
      throw e;
    }
  }

  /**
   * A snapshot's record: the snapshot, and the copy of its session's writable root.
   *
   * @param root the copy of the writable root, or null when the snapshot holds the workspace only
   */
  record Record(
      String name,
      String sessionId,
      Instant createdAt,
      @Nullable Long sizeBytes,
      @Nullable SnapshotRoot root) {
    static Record of(BoxSnapshot snapshot, @Nullable SnapshotRoot root) {
      return new Record(
          snapshot.name(), snapshot.sessionId(), snapshot.createdAt(), snapshot.sizeBytes(), root);
    }

    BoxSnapshot snapshot() {
      return new BoxSnapshot(name, sessionId, createdAt, sizeBytes);
    }
  }

  private Path copy(String name, Path workspace) throws IOException {
    removeData(dataOf(name));
    if (cow.unavailable() == null) {
      Path target = cow.area(AREA).resolve(name);
      if (cow.holds(workspace)) {
        cow.snapshot(workspace, target, true);
      } else {
        cow.create(target);
        TreeCopy.copy(workspace, target);
        cow.makeReadOnly(target);
      }
      return target;
    }
    Path target = copies.resolve(name);
    Files.createDirectories(target);
    TreeCopy.copy(workspace, target);
    return target;
  }

  /** Every snapshot, oldest first. */
  synchronized List<BoxSnapshot> list() {
    List<BoxSnapshot> all = new ArrayList<>();
    for (String name : names()) {
      Record record = read(name);
      if (record != null) {
        all.add(record.snapshot());
      }
    }
    all.sort(Comparator.comparing(BoxSnapshot::createdAt).thenComparing(BoxSnapshot::name));
    return all;
  }

  /**
   * The snapshot {@code name}.
   *
   * @throws BoxException ({@code not_found}) when there is none
   */
  synchronized BoxSnapshot get(String name) {
    return record(name).snapshot();
  }

  /**
   * The copy of the writable root the snapshot {@code name} keeps, or null when it holds the
   * workspace only.
   *
   * @throws BoxException ({@code not_found}) when there is none
   */
  synchronized @Nullable SnapshotRoot root(String name) {
    return record(name).root();
  }

  /** The copies of writable roots that the snapshots keep. */
  synchronized List<SnapshotRoot> roots() {
    List<SnapshotRoot> roots = new ArrayList<>();
    for (String name : names()) {
      Record record = read(name);
      if (record != null && record.root() != null) {
        roots.add(record.root());
      }
    }
    return roots;
  }

  private Record record(String name) {
    BoxSnapshot.checkName("name", name);
    Record record = read(name);
    if (record == null) {
      throw notFound(name);
    }
    return record;
  }

  /**
   * The files of the snapshot {@code name}, to start a workspace from.
   *
   * @throws BoxException ({@code not_found}) when there is none
   */
  synchronized Path files(String name) throws IOException {
    get(name);
    Path data = dataOf(name);
    if (data == null) {
      throw new IOException("the files of snapshot " + name + " are missing");
    }
    return data;
  }

  /**
   * Deletes the snapshot {@code name}: its record, then its files.
   *
   * @return the copy of a writable root it kept, which the caller drops; null when none
   * @throws BoxException ({@code not_found}) when there is none
   */
  synchronized @Nullable SnapshotRoot delete(String name) throws IOException {
    SnapshotRoot root = record(name).root();
    Files.delete(recordOf(name));
    StateFiles.syncDirectory(records);
    removeData(dataOf(name));
    log.info("deleted snapshot {}", name);
    return root;
  }

  /** Removes the files of snapshots that have no record (a crash while taking or deleting one). */
  synchronized void removeOrphans() {
    try {
      List<String> kept = names();
      Path area = cow.existingArea(AREA);
      if (area != null) {
        removeUnrecorded(area, kept);
      }
      removeUnrecorded(copies, kept);
    } catch (IOException e) {
      log.warn("could not sweep the files of deleted snapshots: {}", e.toString());
    }
  }

  private void removeUnrecorded(Path dir, List<String> kept) throws IOException {
    if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
      for (Path entry : entries) {
        if (!kept.contains(entry.getFileName().toString())) {
          log.info("removing the files of an unrecorded snapshot: {}", entry.getFileName());
          removeData(entry);
        }
      }
    }
  }

  private static BoxException notFound(String name) {
    return new BoxException(BoxErrorCode.NOT_FOUND, "snapshot " + name + " not found");
  }

  private Path recordOf(String name) {
    return records.resolve(name + SUFFIX);
  }

  /** The files of {@code name}, wherever they are, or null. */
  private @Nullable Path dataOf(String name) throws IOException {
    Path area = cow.existingArea(AREA);
    if (area != null && Files.isDirectory(area.resolve(name), LinkOption.NOFOLLOW_LINKS)) {
      return area.resolve(name);
    }
    Path copy = copies.resolve(name);
    return Files.isDirectory(copy, LinkOption.NOFOLLOW_LINKS) ? copy : null;
  }

  private void removeData(@Nullable Path data) {
    if (data == null) {
      return;
    }
    try {
      if (cow.holds(data)) {
        cow.delete(data);
      } else if (Files.exists(data, LinkOption.NOFOLLOW_LINKS)) {
        FileTrees.deleteTree(data);
      }
    } catch (IOException e) {
      log.warn("could not remove the files of snapshot {}: {}", data.getFileName(), e.toString());
    }
  }

  /** The names of the recorded snapshots; left-over temporary files are removed. */
  private List<String> names() {
    List<String> names = new ArrayList<>();
    if (!Files.isDirectory(records, LinkOption.NOFOLLOW_LINKS)) {
      return names;
    }
    try (DirectoryStream<Path> files = Files.newDirectoryStream(records)) {
      for (Path file : files) {
        String name = file.getFileName().toString();
        if (name.endsWith(SUFFIX) && !name.startsWith(".")) {
          names.add(name.substring(0, name.length() - SUFFIX.length()));
        } else if (name.startsWith(".") && name.endsWith(".tmp")) {
          Files.deleteIfExists(file);
        }
      }
    } catch (IOException e) {
      log.error("cannot list the snapshots in {}: {}", records, e.toString());
    }
    return names;
  }

  private @Nullable Record read(String name) {
    Path file = recordOf(name);
    try {
      if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)
          || Files.size(file) > MAX_RECORD_BYTES) {
        return null;
      }
      Record record = mapper.readValue(Files.readAllBytes(file), Record.class);
      return record.name().equals(name) ? record : null;
    } catch (IOException | RuntimeException e) {
      log.warn("snapshot record {} cannot be read: {}", file.getFileName(), e.toString());
      return null;
    }
  }

  /** The bytes the regular files under {@code dir} hold, links not followed. */
  private static long sizeOf(Path dir) throws IOException {
    long[] total = {0};
    Files.walkFileTree(
        dir,
        new java.nio.file.SimpleFileVisitor<>() {
          @Override
          public java.nio.file.FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
            if (attrs.isRegularFile()) {
              total[0] += attrs.size();
            }
            return java.nio.file.FileVisitResult.CONTINUE;
          }
        });
    return total[0];
  }
}
