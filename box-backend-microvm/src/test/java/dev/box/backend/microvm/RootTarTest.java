package dev.box.backend.microvm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.box.api.BoxValidationException;
import dev.box.testclient.TarBytes;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An image's exported tar unpacked into a real directory: what is kept, and every member that is
 * refused, with nothing written outside the directory. The unpacker keeps the members' owners (uid
 * 1000 here), which takes root, as the server runs; without it the class is skipped.
 */
class RootTarTest {
  private static final long MAX_BYTES = 1 << 20;

  @TempDir Path dir;
  private Path root;
  private Path outside;

  @BeforeEach
  void dirs() throws IOException {
    assumeTrue(
        "root".equals(System.getProperty("user.name")), "keeping owners takes root: run as root");
    root = Files.createDirectory(dir.resolve("root"));
    outside = Files.createDirectory(dir.resolve("outside"));
  }

  private RootTar.Summary unpack(TarBytes tar) throws IOException {
    return unpack(tar.build(), MAX_BYTES);
  }

  private RootTar.Summary unpack(byte[] tar, long maxBytes) throws IOException {
    return RootTar.unpack(new ByteArrayInputStream(tar), root, maxBytes, 100);
  }

  @Test
  void unpack_keepsFilesDirectoriesLinksOwnersAndModes() throws IOException {
    RootTar.Summary summary =
        unpack(
            TarBytes.builder()
                .dir("./")
                .dir("./usr/")
                .dir("./usr/bin/")
                .file("./usr/bin/dash", "#!shell")
                .symlink("./usr/bin/sh", "dash")
                .symlink("./bin", "usr/bin")
                .hardlink("./usr/bin/ash", "./usr/bin/dash")
                .file("./etc/hostname", "box\n")
                .symlink("./etc/mtab", "/proc/self/mounts")
                .special("./dev/console", '3')
                .special("./run/fifo", '6'));

    assertThat(Files.readString(root.resolve("usr/bin/dash"))).isEqualTo("#!shell");
    assertThat(Files.readSymbolicLink(root.resolve("bin"))).isEqualTo(Path.of("usr/bin"));
    assertThat(Files.readSymbolicLink(root.resolve("etc/mtab")))
        .isEqualTo(Path.of("/proc/self/mounts"));
    assertThat(Files.isSameFile(root.resolve("usr/bin/ash"), root.resolve("usr/bin/dash")))
        .isTrue();
    assertThat(Files.readString(root.resolve("etc/hostname"))).isEqualTo("box\n");
    assertThat(Files.getAttribute(root.resolve("etc/hostname"), "unix:uid")).isEqualTo(1000);
    assertThat(Files.getAttribute(root.resolve("usr/bin"), "unix:gid")).isEqualTo(1000);
    assertThat(Files.getAttribute(root.resolve("bin"), "unix:uid", LinkOption.NOFOLLOW_LINKS))
        .isEqualTo(1000);
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(root.resolve("usr"))))
        .isEqualTo("rwxr-xr-x");
    assertThat(
            PosixFilePermissions.toString(
                Files.getPosixFilePermissions(root.resolve("usr/bin/dash"))))
        .isEqualTo("rw-r--r--");
    // Devices and FIFOs are skipped: the guest's /dev is a devtmpfs.
    assertThat(root.resolve("dev/console")).doesNotExist();
    assertThat(root.resolve("run/fifo")).doesNotExist();
    assertThat(summary.entries()).isEqualTo(11);
  }

  @Test
  void aLaterMemberOfTheSameName_replacesTheEarlierOne() throws IOException {
    unpack(
        TarBytes.builder()
            .file("etc/resolv.conf", "nameserver 192.0.2.1\n")
            .symlink("etc/resolv.conf", "../run/resolv.conf")
            .symlink("lib", "usr/lib")
            .dir("lib"));

    assertThat(Files.readSymbolicLink(root.resolve("etc/resolv.conf")))
        .isEqualTo(Path.of("../run/resolv.conf"));
    assertThat(Files.isDirectory(root.resolve("lib"), LinkOption.NOFOLLOW_LINKS)).isTrue();
  }

  @Test
  void aClimbingMember_isRefused() {
    for (String name : List.of("../escape", "etc/../../escape", "./../escape")) {
      assertThatThrownBy(() -> unpack(TarBytes.builder().file(name, "x")))
          .as(name)
          .isInstanceOf(BoxValidationException.class)
          .hasMessageContaining("leads out of its file system");
    }
    assertThat(dir.resolve("escape")).doesNotExist();
  }

  @Test
  void anAbsoluteMember_isRefused() {
    assertThatThrownBy(() -> unpack(TarBytes.builder().file(outside + "/x", "x")))
        .isInstanceOf(BoxValidationException.class)
        .hasMessageContaining("is absolute");
    assertThat(outside).isEmptyDirectory();
  }

  @Test
  void aMemberThroughASymlink_isRefused_evenWhenTheLinkLeadsOutside() {
    assertThatThrownBy(
            () ->
                unpack(
                    TarBytes.builder().symlink("out", outside.toString()).file("out/planted", "x")))
        .isInstanceOf(BoxValidationException.class)
        .hasMessageContaining("goes through a symbolic link: out");
    assertThatThrownBy(
            () -> unpack(TarBytes.builder().symlink("up", "..").dir("up/outside/deeper")))
        .isInstanceOf(BoxValidationException.class)
        .hasMessageContaining("goes through a symbolic link: up");
    assertThat(outside).isEmptyDirectory();
  }

  @Test
  void aHardLinkToNoFileOfTheTree_isRefused() throws IOException {
    Files.writeString(outside.resolve("secret"), "host");

    assertThatThrownBy(
            () ->
                unpack(TarBytes.builder().hardlink("stolen", outside.resolve("secret").toString())))
        .isInstanceOf(BoxValidationException.class)
        .hasMessageContaining("is absolute");
    assertThatThrownBy(
            () ->
                unpack(
                    TarBytes.builder()
                        .symlink("link", outside.resolve("secret").toString())
                        .hardlink("stolen", "link")))
        .isInstanceOf(BoxValidationException.class)
        .hasMessageContaining("names no file of the image");
    assertThatThrownBy(() -> unpack(TarBytes.builder().hardlink("stolen", "missing")))
        .isInstanceOf(BoxValidationException.class)
        .hasMessageContaining("names no file of the image");
  }

  @Test
  void anArchiveLargerThanTheBound_isRefused() {
    byte[] tar = TarBytes.builder().file("big", new byte[8192]).build();

    assertThatThrownBy(() -> unpack(tar, 4096))
        .isInstanceOf(BoxValidationException.class)
        .hasMessageContaining("larger than");
  }

  @Test
  void moreMembersThanTheBound_isRefused() {
    TarBytes tar = TarBytes.builder();
    for (int i = 0; i <= 100; i++) {
      tar.file("f" + i, "");
    }

    assertThatThrownBy(() -> unpack(tar))
        .isInstanceOf(BoxValidationException.class)
        .hasMessageContaining("more than 100 files");
  }

  @Test
  void aHeaderWithAWrongChecksum_isRefused() {
    byte[] tar = TarBytes.builder().file("f", "x").build();
    tar[0] = 'g';

    assertThatThrownBy(() -> unpack(tar, MAX_BYTES))
        .isInstanceOf(BoxValidationException.class)
        .hasMessageContaining("wrong checksum");
  }
}
