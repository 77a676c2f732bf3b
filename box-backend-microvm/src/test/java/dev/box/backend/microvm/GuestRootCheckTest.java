package dev.box.backend.microvm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.box.api.BoxValidationException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What an image's tree must have to boot, on real trees: links resolved inside the tree only. */
class GuestRootCheckTest {
  @TempDir Path root;

  @BeforeEach
  void merged() throws IOException {
    // As a merged-/usr Debian: /bin a link to usr/bin, sh a link to dash.
    Files.createDirectories(root.resolve("usr/bin"));
    Files.createDirectories(root.resolve("etc"));
    Files.createSymbolicLink(root.resolve("bin"), Path.of("usr/bin"));
    Files.createSymbolicLink(root.resolve("usr/bin/sh"), Path.of("dash"));
    Files.writeString(root.resolve("usr/bin/dash"), "");
    Files.setPosixFilePermissions(
        root.resolve("usr/bin/dash"), PosixFilePermissions.fromString("rwxr-xr-x"));
  }

  @Test
  void aTreeWithAShellAndEtc_passes_throughLinks() {
    assertThatCode(() -> GuestRootCheck.check(root, "img")).doesNotThrowAnyException();
  }

  @Test
  void noShell_isRefused_namingTheImage() throws IOException {
    Files.delete(root.resolve("usr/bin/dash"));

    assertThatThrownBy(() -> GuestRootCheck.check(root, "img:1"))
        .isInstanceOf(BoxValidationException.class)
        .hasMessage(
            "image img:1 cannot be a micro-VM's root: it has no executable /bin/sh, which"
                + " starts every process");
  }

  @Test
  void aShellThatIsNotExecutable_isRefused() throws IOException {
    Files.setPosixFilePermissions(
        root.resolve("usr/bin/dash"), PosixFilePermissions.fromString("rw-r--r--"));

    assertThatThrownBy(() -> GuestRootCheck.check(root, "img"))
        .hasMessageContaining("no executable /bin/sh");
  }

  @Test
  void aShellLinkLeadingOutOfTheTree_resolvesInsideIt() throws IOException {
    Files.delete(root.resolve("usr/bin/sh"));
    // On the host this would be the host's /bin/sh; in the guest it is the tree's, which is absent.
    Files.createSymbolicLink(root.resolve("usr/bin/sh"), Path.of("../../../../../usr/bin/sh"));

    assertThatThrownBy(() -> GuestRootCheck.check(root, "img"))
        .hasMessageContaining("no executable /bin/sh");
    Files.delete(root.resolve("usr/bin/sh"));
    Files.createSymbolicLink(root.resolve("usr/bin/sh"), Path.of("/usr/bin/dash"));
    assertThat(GuestRootCheck.resolve(root, "bin/sh")).isNotNull();
  }

  @Test
  void aLinkLoop_isNoShell() throws IOException {
    Files.delete(root.resolve("usr/bin/sh"));
    Files.createSymbolicLink(root.resolve("usr/bin/sh"), Path.of("sh"));

    assertThatThrownBy(() -> GuestRootCheck.check(root, "img"))
        .hasMessageContaining("no executable /bin/sh");
  }

  @Test
  void aMountPointThatIsALink_isRefused() throws IOException {
    Files.createSymbolicLink(root.resolve("run"), Path.of("/"));

    assertThatThrownBy(() -> GuestRootCheck.check(root, "img"))
        .isInstanceOf(BoxValidationException.class)
        .hasMessageContaining("/run is not a directory, and the VM's init mounts there");
  }

  @Test
  void noEtc_isRefused() throws IOException {
    Files.delete(root.resolve("etc"));

    assertThatThrownBy(() -> GuestRootCheck.check(root, "img"))
        .hasMessageContaining("it has no directory /etc");
  }
}
