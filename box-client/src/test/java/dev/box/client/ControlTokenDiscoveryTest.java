package dev.box.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import java.net.URI;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * How a client finds the control token of a real server that generated it in its data directory,
 * and what the server answers a client that has none.
 */
class ControlTokenDiscoveryTest {
  @RegisterExtension static final LiveBox box = LiveBox.perClass();

  @Test
  void aClientWithoutTheToken_isUnauthorized() {
    try (BoxClient anonymous = BoxClient.connect(box.uri())) {
      assertThatThrownBy(anonymous::sessions)
          .isInstanceOfSatisfying(
              BoxException.class, e -> assertThat(e.code()).isEqualTo(BoxErrorCode.UNAUTHORIZED))
          .hasMessageStartingWith("missing control token");
    }
    try (BoxClient wrong = BoxClient.builder(box.uri()).controlToken("wrong").build()) {
      assertThatThrownBy(wrong::status).hasMessage("invalid control token");
    }
  }

  @Test
  void controlTokenFrom_readsTheServersDataDir() {
    try (BoxClient client = BoxClient.builder(box.uri()).controlTokenFrom(box.dataDir()).build()) {
      assertThat(client.sessions()).isNotNull();
    }
  }

  @Test
  void controlTokenFrom_aDirectoryWithoutTheFile_namesTheFile(@TempDir Path elsewhere) {
    assertThatThrownBy(() -> BoxClient.builder(box.uri()).controlTokenFrom(elsewhere))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "no control token file "
                + elsewhere.resolve(".box-state/control-token")
                + ": is "
                + elsewhere
                + " the server's data dir?");
  }

  @Test
  void discovery_takesBoxControlTokenFirst_thenBoxDataDir() {
    String dataDir = box.dataDir().toString();
    try (BoxClient fromEnv =
            BoxClient.builder(box.uri())
                .discoverControlToken(Map.of("BOX_CONTROL_TOKEN", box.token()))
                .build();
        BoxClient fromDir =
            BoxClient.builder(box.uri())
                .discoverControlToken(Map.of("BOX_DATA_DIR", dataDir))
                .build();
        BoxClient tokenWins =
            BoxClient.builder(box.uri())
                .discoverControlToken(Map.of("BOX_CONTROL_TOKEN", "wrong", "BOX_DATA_DIR", dataDir))
                .build()) {
      assertThat(fromEnv.status()).isNotNull();
      assertThat(fromDir.status()).isNotNull();
      assertThatThrownBy(tokenWins::status).hasMessage("invalid control token");
    }
  }

  @Test
  void discovery_withNothingToFind_sendsNoToken(@TempDir Path empty) {
    try (BoxClient client =
        BoxClient.builder(box.uri())
            .discoverControlToken(Map.of("BOX_DATA_DIR", empty.toString()))
            .build()) {
      assertThatThrownBy(client::sessions).hasMessageStartingWith("missing control token");
    }
  }

  @Test
  void theDefaultDataDirsToken_isForLoopbackServersOnly() {
    assertThat(TokenDiscovery.isLoopback(URI.create("http://127.0.0.1:5410"))).isTrue();
    assertThat(TokenDiscovery.isLoopback(URI.create("http://127.1.2.3:5410"))).isTrue();
    assertThat(TokenDiscovery.isLoopback(URI.create("http://LOCALHOST:5410/box/"))).isTrue();
    assertThat(TokenDiscovery.isLoopback(URI.create("http://[::1]:5410"))).isTrue();
    assertThat(TokenDiscovery.isLoopback(URI.create("http://box.example:5410"))).isFalse();
    assertThat(TokenDiscovery.isLoopback(URI.create("http://127.0.0.1.example:5410"))).isFalse();
    assertThat(TokenDiscovery.isLoopback(URI.create("http://10.0.0.1:5410"))).isFalse();
  }
}
