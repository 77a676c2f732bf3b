package dev.box.core.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.box.api.BoxValidationException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Which host directories a sandbox may mount. Every host directory is a real one under a
 * {@code @TempDir}; the blocked system paths are only checked, never created.
 */
class HostPathPolicyTest {
  @TempDir Path tmp;

  private Path dataDir;
  private Path root;
  private Path outside;

  @BeforeEach
  void createDirectories() throws IOException {
    dataDir = Files.createDirectories(tmp.resolve("data"));
    root = Files.createDirectories(tmp.resolve("allowed"));
    outside = Files.createDirectories(tmp.resolve("outside"));
  }

  private HostPathPolicy open() {
    return new HostPathPolicy(dataDir, List.of());
  }

  private HostPathPolicy rooted() {
    return new HostPathPolicy(dataDir, List.of(root));
  }

  private static String blocked(Object path) {
    return "host_path " + path + " is blocked for security";
  }

  /**
   * Checks that the policy {@link #rooted} refuses {@code path} as outside its root; {@code create}
   * is whether the directory would be created.
   */
  private void assertOutsideTheRoot(Object path, boolean create) throws IOException {
    String expected = "host_path is outside allowed_mount_roots: " + root.toRealPath();

    assertThatThrownBy(() -> rooted().check(path.toString(), create))
        .isInstanceOf(BoxValidationException.class)
        .hasMessage(expected);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "/etc",
        "/etc/ssl",
        "/etc/shadow",
        "/proc",
        "/proc/self",
        "/sys",
        "/sys/fs/cgroup",
        "/dev",
        "/dev/shm",
        "/root",
        "/root/.ssh",
        "/boot",
        "/run",
        "/var/run",
        "/run/docker.sock",
        "/var/run/docker.sock",
        "/run/podman/podman.sock",
        "/"
      })
  void blockedSystemPath_isRefused(String path) {
    assertThatThrownBy(() -> open().check(path, false))
        .isInstanceOf(BoxValidationException.class)
        .hasMessage(blocked(path));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {"/etc/", "//etc", "/./etc", "/usr/../etc", "/etc/ssl/../../etc/ssl", "/."})
  void blockedPathSpelledDifferently_isRefusedWithTheOriginalSpelling(String path) {
    assertThatThrownBy(() -> open().check(path, false))
        .isInstanceOf(BoxValidationException.class)
        .hasMessage(blocked(path));
  }

  @Test
  void blockedPath_isRefusedEvenInsideAllowedRootsThatContainIt() {
    HostPathPolicy policy = new HostPathPolicy(dataDir, List.of(Path.of("/")));

    assertThatThrownBy(() -> policy.check("/etc", false)).hasMessage(blocked("/etc"));
  }

  @Test
  void directoriesInAManagedRoot_areBoxOwned_andOthersOnlyWhenCreated() throws IOException {
    Path managed = Files.createDirectories(root.resolve("default"));
    Path tenant = Files.createDirectories(managed.resolve("tenants/ws-1"));
    Path beside = Files.createDirectories(root.resolve("beside"));
    HostPathPolicy policy = HostPathPolicy.restrictedTo(dataDir, List.of(root), List.of(managed));

    assertThat(policy.checkDirectory(tenant.toString(), true).boxOwned()).isTrue();
    assertThat(policy.checkDirectory(managed.toString(), true).boxOwned()).isTrue();
    assertThat(policy.checkDirectory(beside.toString(), true).boxOwned()).isFalse();
    assertThat(policy.checkDirectory(root.resolve("new").toString(), true).boxOwned()).isTrue();
    Path link = Files.createSymbolicLink(managed.resolve("link"), beside);
    assertThat(policy.checkDirectory(link.toString(), true).boxOwned())
        .as("judged by where the link leads")
        .isFalse();
  }

  @Test
  void dataDirItself_isRefused() {
    assertThatThrownBy(() -> open().check(dataDir.toString(), false))
        .isInstanceOf(BoxValidationException.class)
        .hasMessage(blocked(dataDir));
  }

  @Test
  void pathBelowTheDataDir_isRefused() throws IOException {
    Path below = Files.createDirectories(dataDir.resolve("workspaces/s1"));

    assertThatThrownBy(() -> open().check(below.toString(), false)).hasMessage(blocked(below));
  }

  @Test
  void missingPathBelowTheDataDir_isRefusedAndNotCreated() {
    Path below = dataDir.resolve("new/dir");

    assertThatThrownBy(() -> open().check(below.toString(), true)).hasMessage(blocked(below));
    assertThat(dataDir.resolve("new")).doesNotExist();
  }

  @Test
  void pathThatContainsTheDataDir_isRefused() {
    assertThatThrownBy(() -> open().check(tmp.toString(), false)).hasMessage(blocked(tmp));
  }

  @Test
  void dataDirReachedThroughASymlink_isRefused() throws IOException {
    Path link = Files.createSymbolicLink(root.resolve("to-data"), dataDir);

    assertThatThrownBy(() -> open().check(link.toString(), false)).hasMessage(blocked(link));
  }

  @Test
  void dataDirGivenThroughASymlink_isStillProtected() throws IOException {
    Path linkToData = Files.createSymbolicLink(tmp.resolve("data-link"), dataDir);
    HostPathPolicy policy = new HostPathPolicy(linkToData, List.of());

    assertThatThrownBy(() -> policy.check(dataDir.toString(), false)).hasMessage(blocked(dataDir));
  }

  @Test
  void siblingOfTheDataDir_isAccepted() throws IOException {
    assertThat(open().check(outside.toString(), false)).isEqualTo(outside.toRealPath());
  }

  @Test
  void directoryInsideAnAllowedRoot_isAcceptedAsItsRealPath() throws IOException {
    Path inside = Files.createDirectories(root.resolve("project/src"));

    assertThat(rooted().check(inside.toString(), false)).isEqualTo(inside.toRealPath());
  }

  @Test
  void allowedRootItself_isAccepted() throws IOException {
    assertThat(rooted().check(root.toString(), false)).isEqualTo(root.toRealPath());
  }

  @Test
  void directoryOutsideTheAllowedRoots_isRefusedListingThem() throws IOException {
    assertOutsideTheRoot(outside, false);
  }

  @Test
  void outsideEveryRoot_listsAllRoots() throws IOException {
    Path second = Files.createDirectories(tmp.resolve("second"));
    HostPathPolicy policy = new HostPathPolicy(dataDir, List.of(root, second));

    assertThatThrownBy(() -> policy.check(outside.toString(), false))
        .hasMessage(
            "host_path is outside allowed_mount_roots: "
                + root.toRealPath()
                + ", "
                + second.toRealPath());
    assertThat(policy.check(second.toString(), false)).isEqualTo(second.toRealPath());
  }

  @Test
  void siblingSharingTheRootsNamePrefix_isOutside() throws IOException {
    Path lookalike = Files.createDirectories(tmp.resolve("allowed-not"));

    assertOutsideTheRoot(lookalike, false);
  }

  @Test
  void symlinkInsideAnAllowedRootToEtc_isRefused() throws IOException {
    Path link = Files.createSymbolicLink(root.resolve("etc-link"), Path.of("/etc"));

    assertThatThrownBy(() -> rooted().check(link.toString(), false))
        .isInstanceOf(BoxValidationException.class)
        .hasMessage(blocked(link));
  }

  @Test
  void symlinkToEtc_isRefusedWithoutAllowedRootsToo() throws IOException {
    Path link = Files.createSymbolicLink(outside.resolve("etc-link"), Path.of("/etc"));

    assertThatThrownBy(() -> open().check(link.toString(), false)).hasMessage(blocked(link));
  }

  @Test
  void directoryBelowASymlinkToEtc_isRefused() throws IOException {
    Path link = Files.createSymbolicLink(root.resolve("etc-link"), Path.of("/etc"));
    String path = link.resolve("ssl").toString();

    assertThatThrownBy(() -> rooted().check(path, true)).hasMessage(blocked(path));
  }

  @Test
  void symlinkInsideAnAllowedRootToADirectoryOutsideIt_isRefused() throws IOException {
    Path link = Files.createSymbolicLink(root.resolve("escape"), outside);

    assertOutsideTheRoot(link, false);
  }

  @Test
  void relativeSymlinkEscapingTheRoot_isRefused() throws IOException {
    Path link = Files.createSymbolicLink(root.resolve("escape"), Path.of("../outside"));

    assertOutsideTheRoot(link, false);
  }

  @Test
  void missingDirectoryBelowAnEscapingSymlink_isRefusedAndNotCreated() throws IOException {
    Path link = Files.createSymbolicLink(root.resolve("escape"), outside);

    assertOutsideTheRoot(link.resolve("new"), true);
    assertThat(outside.resolve("new")).doesNotExist();
  }

  @Test
  void danglingSymlinkPointingOutsideTheRoot_isRefusedAndNothingIsCreated() throws IOException {
    Path target = outside.resolve("not-yet");
    Path link = Files.createSymbolicLink(root.resolve("dangling"), target);

    assertThatThrownBy(() -> rooted().check(link.resolve("sub").toString(), true))
        .isInstanceOf(BoxValidationException.class);
    assertThatThrownBy(() -> rooted().check(link.toString(), true))
        .isInstanceOf(BoxValidationException.class);
    assertThat(target).doesNotExist();
  }

  @Test
  void symlinkStayingInsideTheRoot_isAcceptedAsItsTarget() throws IOException {
    Path target = Files.createDirectories(root.resolve("real"));
    Path link = Files.createSymbolicLink(root.resolve("alias"), target);

    assertThat(rooted().check(link.toString(), false)).isEqualTo(target.toRealPath());
  }

  @Test
  void allowedRootGivenThroughASymlink_acceptsItsRealDirectory() throws IOException {
    Path rootLink = Files.createSymbolicLink(tmp.resolve("root-link"), root);
    Path inside = Files.createDirectories(root.resolve("p"));
    HostPathPolicy policy = new HostPathPolicy(dataDir, List.of(rootLink));

    assertThat(policy.check(inside.toString(), false)).isEqualTo(inside.toRealPath());
  }

  @Test
  void dotDotSegmentsLeavingTheRoot_areNormalisedAndRefused() throws IOException {
    String path = root + "/sub/../../outside";

    assertOutsideTheRoot(path, false);
  }

  @Test
  void dotDotSegmentsStayingInsideTheRoot_areNormalisedAndAccepted() throws IOException {
    Path b = Files.createDirectories(root.resolve("b"));

    assertThat(rooted().check(root + "/a/../b", false)).isEqualTo(b.toRealPath());
  }

  @Test
  void dotDotSegmentsReachingEtc_areRefused() {
    String path = root + "/../../../../../../../../etc";

    assertThatThrownBy(() -> open().check(path, false)).hasMessage(blocked(path));
  }

  @Test
  void missingDirectory_isCreatedWhenAllowed() throws IOException {
    Path missing = root.resolve("a/b/c");

    Path checked = rooted().check(missing.toString(), true);

    assertThat(missing).isDirectory();
    assertThat(checked).isEqualTo(missing.toRealPath());
  }

  @Test
  void missingDirectory_isRefusedWhenCreationIsNotAllowed() {
    Path missing = root.resolve("absent");

    assertThatThrownBy(() -> rooted().check(missing.toString(), false))
        .isInstanceOf(BoxValidationException.class)
        .hasMessage("host_path must point to an existing directory on the host: " + missing);
    assertThat(missing).doesNotExist();
  }

  @Test
  void missingDirectoryOutsideTheRoots_isRefusedAndNotCreated() throws IOException {
    Path missing = outside.resolve("new");

    assertOutsideTheRoot(missing, true);
    assertThat(missing).doesNotExist();
  }

  @Test
  void regularFile_isRefused() throws IOException {
    Path file = Files.writeString(root.resolve("notes.txt"), "x");

    assertThatThrownBy(() -> rooted().check(file.toString(), true))
        .isInstanceOf(BoxValidationException.class)
        .hasMessage("host_path must point to a directory: " + file);
  }

  @Test
  void symlinkToARegularFile_isRefused() throws IOException {
    Path file = Files.writeString(root.resolve("notes.txt"), "x");
    Path link = Files.createSymbolicLink(root.resolve("notes-link"), file);

    assertThatThrownBy(() -> rooted().check(link.toString(), false))
        .hasMessage("host_path must point to a directory: " + link);
  }

  @Test
  void relativePath_isRefused() {
    assertThatThrownBy(() -> open().check("relative/dir", true))
        .isInstanceOf(BoxValidationException.class)
        .hasMessage("host_path relative/dir is not a path on this host");
  }
}
