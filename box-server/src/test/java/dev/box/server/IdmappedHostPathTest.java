package dev.box.server;

import static dev.box.server.ErrorAnswers.assertError;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.box.api.BoxDataDir;
import dev.box.testclient.Answer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Host folders of other owners through the server, on bubblewrap and Docker: health says idmapped
 * mounts work; a root-owned 0755 {@code host_path} is written by the session as root's, through a
 * {@code nosuid} mount; a root-owned 0700 extra mount is read; a mode-0000 folder is a 400; and
 * deleting the session leaves no staged mount on the host.
 */
class IdmappedHostPathTest {

  private static TestServer start(String backend) {
    return backend.equals("docker") ? TestServer.start(TestServer.docker()) : TestServer.start();
  }

  @ParameterizedTest
  @ValueSource(strings = {"bwrap", "docker"})
  void rootOwnedFolders_areUsedAsTheirOwner_andNothingStagedOutlivesTheSession(String backend)
      throws IOException {
    assumeTrue("root".equals(System.getProperty("user.name")), "owning folders needs root");
    try (TestServer box = start(backend)) {
      String idmapped =
          box.get("/v1/health").body().path("enforced").path("idmapped_mounts").asText();
      assumeTrue(!idmapped.isEmpty(), "the " + backend + " backend is not available here");
      assertThat(idmapped).isEqualTo("true");
      Path shared = folder(box.dataDir.resolve("shared"), "rwxr-xr-x");
      Path secret = folder(box.dataDir.resolve("secret"), "rwx------");
      Files.writeString(secret.resolve("given"), "from the host\n");
      String spec =
          "\"host_path\":\"%s\",\"extra_mounts\":[{\"host_path\":\"%s\",\"mount_path\":\"/secret\",\"mode\":\"ro\"}]"
              .formatted(shared, secret);

      Answer a =
          box.exec(
              "s1",
              "echo hi > made; cat /secret/given; grep ' /workspace ' /proc/self/mountinfo",
              spec);

      assertThat(a.stdout())
          .as(a.body().toString())
          .startsWith("from the host\n")
          .contains("nosuid");
      assertThat(Files.getAttribute(shared.resolve("made"), "unix:uid")).isEqualTo(0);
      assertThat(Files.getAttribute(shared.resolve("made"), "unix:gid")).isEqualTo(0);
      assertThat(staged(box)).hasSize(2);
      assertThat(box.delete("/v1/sessions/s1").status()).isLessThan(300);
      assertThat(staged(box)).isEmpty();

      Path closed = folder(box.dataDir.resolve("closed"), "---------");
      assertError(
              box.exec("s2", "true", "\"host_path\":\"" + closed + "\""), 400, "validation_error")
          .contains("mode 0000")
          .contains("is not writable");
    }
  }

  private static Path folder(Path dir, String mode) throws IOException {
    Files.createDirectories(dir);
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString(mode));
    return dir.toRealPath();
  }

  /** The staged idmapped mounts of the server's data dir. */
  private static List<String> staged(TestServer box) throws IOException {
    String state = BoxDataDir.stateDir(box.dataDir).toRealPath().toString();
    return Files.readAllLines(Path.of("/proc/self/mountinfo")).stream()
        .map(line -> line.split(" ")[4])
        .filter(point -> point.startsWith(state) && point.contains("-idmapped/"))
        .toList();
  }
}
