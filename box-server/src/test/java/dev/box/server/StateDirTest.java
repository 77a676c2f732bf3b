package dev.box.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The server's private state lives in {@code <data dir>/.box-state} (mode 0700): a data dir of an
 * earlier version has its token and workspaces moved there, and a state dir that is a symbolic link
 * is refused.
 */
class StateDirTest {
  private static final String TOKEN = "a-token-of-an-earlier-version-0123456789abcdef";

  @TempDir Path dataDir;

  private BoxServer start() {
    return BoxServer.start(
        ServerConfig.resolve(
            Map.of("port", "0", "data_dir", dataDir.toString(), "backend", "bwrap"), Map.of()));
  }

  @Test
  void anEarlierLayout_isMovedIntoTheStateDir_andTheTokenKept() throws IOException {
    Path token = Files.writeString(dataDir.resolve("control-token"), TOKEN);
    Files.setPosixFilePermissions(token, PosixFilePermissions.fromString("rw-------"));
    Path kept = Files.createDirectories(dataDir.resolve("workspaces/persistent_kept-0123abcd"));
    Files.writeString(kept.resolve("note"), "kept");
    Files.createDirectories(dataDir.resolve("default/tenants/ws-1"));

    try (BoxServer server = start()) {
      assertThat(server.controlToken()).isEqualTo(TOKEN);
    }

    Path state = dataDir.resolve(".box-state");
    assertThat(Files.getPosixFilePermissions(state))
        .isEqualTo(PosixFilePermissions.fromString("rwx------"));
    assertThat(state.resolve("control-token")).hasContent(TOKEN);
    assertThat(dataDir.resolve("control-token")).doesNotExist();
    assertThat(dataDir.resolve("workspaces")).doesNotExist();
    assertThat(dataDir.resolve("default/tenants/ws-1")).as("LangBot's, untouched").isDirectory();
  }

  @Test
  void aStateDirThatIsALink_isRefusedAtStartup(@TempDir Path elsewhere) throws IOException {
    Files.createSymbolicLink(dataDir.resolve(".box-state"), elsewhere);

    assertThatThrownBy(this::start).hasMessageContaining("is a symbolic link");
    assertThat(elsewhere).isEmptyDirectory();
  }
}
