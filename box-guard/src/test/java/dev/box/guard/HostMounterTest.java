package dev.box.guard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real {@code box-mounter}, as root on this host: its mounts are those the commands it replaces
 * made, its errors say which step failed, and a request it must not take ends it, after which it
 * takes no more.
 */
class HostMounterTest {
  @TempDir Path dir;
  private HostMounter mounter;
  private Path source;
  private Path stage;
  private Path slot;

  @BeforeEach
  void start() throws IOException {
    assumeTrue("root".equals(System.getProperty("user.name")), "mounting needs root");
    // Started from a thread that ends at once, as a server's request threads do: the mounter must
    // outlive it (a parent-death signal would follow that thread, not the server).
    AtomicReference<HostMounter> started = new AtomicReference<>();
    AtomicReference<IOException> failed = new AtomicReference<>();
    Thread starter =
        new Thread(
            () -> {
              try {
                started.set(HostMounter.start(dir.resolve("data")));
              } catch (IOException e) {
                failed.set(e);
              }
            });
    starter.start();
    try {
      starter.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException(e);
    }
    if (failed.get() != null) {
      throw failed.get();
    }
    mounter = started.get();
    source = Files.createDirectories(dir.resolve("source"));
    stage = Files.createDirectories(dir.resolve("stage"));
    slot = Files.createDirectories(dir.resolve("slot"));
    Files.writeString(source.resolve("file"), "from the source");
  }

  @AfterEach
  void stop() throws IOException, InterruptedException {
    if (mounter != null) {
      mounter.close();
    }
    for (Path point : List.of(slot, stage)) {
      if (point != null && mountOptions(point) != null) {
        new ProcessBuilder("umount", "--lazy", point.toString()).start().waitFor();
      }
    }
  }

  @Test
  void bind_movesANosuidNodevBindOfTheSourceOntoTheSlot_andDetachUndoesIt() throws IOException {
    mounter.bind(source, stage, slot);

    assertThat(Files.readString(slot.resolve("file"))).isEqualTo("from the source");
    assertThat(mountOptions(slot)).contains("nosuid").contains("nodev");
    assertThat(mountOptions(stage)).as("the stage is left empty").isNull();

    mounter.detach(slot);

    assertThat(mountOptions(slot)).isNull();
    assertThat(slot.resolve("file")).doesNotExist();
    assertThat(mounter.usable()).isTrue();
  }

  @Test
  void join_bindsIntoAnotherProcessesMountNamespace_andNotTheHosts() throws Exception {
    Path target = Files.createDirectories(dir.resolve("target"));
    // A process in a user and mount namespace of its own, as a jail's init is.
    Process holder =
        new ProcessBuilder(
                "unshare", "--user", "--map-root-user", "--mount", "--fork", "sleep", "60")
            .start();
    try {
      long pid = awaitChildOf(holder.pid());
      mounter.join(source, pid, target.toString());

      String seen =
          run(
              "nsenter",
              "--target",
              Long.toString(pid),
              "--mount",
              "--",
              "sh",
              "-c",
              "cat \"$0\"/file; grep \" $0 \" /proc/self/mountinfo",
              target.toString());
      assertThat(seen).startsWith("from the source").contains("nosuid").contains("nodev");
      assertThat(mountOptions(target)).as("the host's namespace is untouched").isNull();
      assertThat(target.resolve("file")).doesNotExist();

      Path link = Files.createSymbolicLink(dir.resolve("link"), source);
      assertThatThrownBy(() -> mounter.join(link, pid, target.toString()))
          .as("a symbolic link put where a checked path was is not followed")
          .isInstanceOf(IOException.class);
      assertThatThrownBy(() -> mounter.join(source, pid, dir.resolve("missing").toString()))
          .hasMessageContaining("attach failed");
      assertThatThrownBy(() -> mounter.join(source, Integer.MAX_VALUE, target.toString()))
          .hasMessageContaining("join failed");
      assertThat(mounter.usable()).isTrue();
    } finally {
      holder.destroyForcibly().waitFor();
    }
  }

  @Test
  void aJoinThatCannotEnterTheNamespace_saysWhy() throws Exception {
    Path target = Files.createDirectories(dir.resolve("target"));

    // A namespace of another kind: the child's setns(CLONE_NEWNS) answers EINVAL, which the
    // mounter reports as such (not as a bare I/O error).
    assertThatThrownBy(() -> mounter.join(source, Path.of("/proc/self/ns/net"), target.toString()))
        .hasMessageContaining("join failed")
        .hasMessageContaining("EINVAL");
    assertThat(mountOptions(target)).isNull();
    assertThat(mounter.usable()).isTrue();
  }

  @Test
  void idmap_showsTheOwnersFilesAsTheSandboxUsers_andWhatItWritesLandsAsTheOwners()
      throws Exception {
    Files.setAttribute(source, "unix:uid", 4321);
    Files.setAttribute(source, "unix:gid", 4322);
    Files.setPosixFilePermissions(source, PosixFilePermissions.fromString("rwx------"));
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx--x--x"));
    mounter.idmap(IdmappedFolder.of(source, false), slot, 2_000_000, 2_000_001);
    try {
      assertThat(mountOptions(slot)).contains("nosuid").contains("nodev").contains("idmapped");
      assertThat(Files.getAttribute(slot, "unix:uid")).isEqualTo(2_000_000);
      assertThat(Files.getAttribute(slot, "unix:gid")).isEqualTo(2_000_001);
      assertThat(Files.getAttribute(slot.resolve("file"), "unix:uid"))
          .as("an id the mapping does not name is nobody")
          .isEqualTo(65534);

      run(
          "setpriv",
          "--reuid=2000000",
          "--regid=2000001",
          "--clear-groups",
          "sh",
          "-c",
          "echo made > \"$0\"/made",
          slot.toString());
      assertThat(Files.getAttribute(source.resolve("made"), "unix:uid")).isEqualTo(4321);
      assertThat(Files.getAttribute(source.resolve("made"), "unix:gid")).isEqualTo(4322);
    } finally {
      mounter.detach(slot);
    }
    assertThat(mountOptions(slot)).isNull();
  }

  @Test
  void idmap_readOnly_isReadOnly() throws IOException {
    mounter.idmap(IdmappedFolder.of(source, true), slot, 2_000_000, 2_000_000);
    try {
      assertThat(mountOptions(slot)).startsWith("ro,");
      assertThat(Files.readString(slot.resolve("file"))).isEqualTo("from the source");
    } finally {
      mounter.detach(slot);
    }
  }

  @Test
  void idmap_ofAFolderSwappedSinceItWasChecked_isRefused_andMountsNothing() throws IOException {
    IdmappedFolder checked = IdmappedFolder.of(source, false);
    Path moved = dir.resolve("moved");
    Files.move(source, moved);
    Files.createDirectories(source);

    assertThatThrownBy(() -> mounter.idmap(checked, slot, 2_000_000, 2_000_000))
        .hasMessageContaining("check failed")
        .hasMessageContaining("ESTALE");
    Files.delete(source);
    Files.createSymbolicLink(source, moved);
    assertThatThrownBy(() -> mounter.idmap(checked, slot, 2_000_000, 2_000_000))
        .as("a symbolic link put where the checked folder was is not followed")
        .isInstanceOf(IOException.class);
    assertThat(mountOptions(slot)).isNull();
    assertThat(mounter.usable()).isTrue();
  }

  /** Runs {@code argv} and asserts that it succeeded: what it printed, stderr included. */
  private static String run(String... argv) throws IOException, InterruptedException {
    Process process = new ProcessBuilder(argv).redirectErrorStream(true).start();
    String said = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor()).as(said).isZero();
    return said;
  }

  /** The pid of the first child of {@code parent} (unshare's forked sleep). */
  private static long awaitChildOf(long parent) throws InterruptedException {
    for (int i = 0; i < 500; i++) {
      var child = ProcessHandle.of(parent).flatMap(p -> p.children().findFirst());
      if (child.isPresent()) {
        return child.get().pid(); // forked after unshare(2): born in the new namespaces
      }
      Thread.sleep(10);
    }
    throw new IllegalStateException("unshare started no child");
  }

  @Test
  void aFailedStep_isNamed_andLeavesNothingMounted_andTheMounterWorksOn() throws IOException {
    assertThatThrownBy(() -> mounter.bind(dir.resolve("missing"), stage, slot))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("bind failed")
        .hasMessageContaining("ENOENT");
    assertThatThrownBy(() -> mounter.bind(source, stage, dir.resolve("no-slot")))
        .hasMessageContaining("move failed");
    assertThat(mountOptions(stage)).as("a bind whose move failed is detached").isNull();
    assertThatThrownBy(() -> mounter.detach(slot)).hasMessageContaining("detach failed");

    mounter.bind(source, stage, slot);
    assertThat(Files.readString(slot.resolve("file"))).isEqualTo("from the source");
  }

  @Test
  void pathsItMustNotTake_areRefusedBeforeTheyAreSent() throws IOException {
    assertThatThrownBy(() -> mounter.bind(Path.of("relative"), stage, slot))
        .hasMessageContaining("not a path");
    assertThatThrownBy(() -> mounter.detach(Path.of("/" + "x".repeat(5000))))
        .hasMessageContaining("not a path");
    assertThat(mounter.usable()).isTrue();
  }

  @Test
  void aMounterThatDied_failsItsRequest_andIsNotUsedAgain() throws IOException {
    ProcessHandle child =
        ProcessHandle.current().children().filter(this::isMounter).findFirst().orElseThrow();
    child.destroyForcibly();
    child.onExit().join();

    assertThatThrownBy(() -> mounter.bind(source, stage, slot)).isInstanceOf(IOException.class);
    assertThat(mounter.usable()).isFalse();
    assertThat(mountOptions(slot)).isNull();
  }

  private boolean isMounter(ProcessHandle process) {
    return process.info().command().map(c -> c.endsWith("/box-mounter")).orElse(false);
  }

  /** The mount options of the mount at {@code point} in this namespace, or null if none. */
  private static @Nullable String mountOptions(Path point) throws IOException {
    String real = point.toAbsolutePath().toString();
    for (String line :
        Files.readAllLines(Path.of("/proc/self/mountinfo"), StandardCharsets.UTF_8)) {
      String[] fields = line.split(" ");
      if (fields.length > 5 && fields[4].equals(real)) {
        return fields[5];
      }
    }
    return null;
  }
}
