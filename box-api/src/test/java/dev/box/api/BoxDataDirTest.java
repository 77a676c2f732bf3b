package dev.box.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BoxDataDirTest {
  @TempDir Path dir;

  @Test
  void theTokenFile_isInTheDataDir_andTheDefaultIsRelativeToTheWorkingDirectory() {
    assertThat(BoxDataDir.tokenFile(dir)).isEqualTo(dir.resolve(".box-state/control-token"));
    assertThat(BoxDataDir.defaultPath())
        .isEqualTo(Path.of("").toAbsolutePath().resolve("data/box"));
  }

  @Test
  void readToken_stripsSurroundingWhitespace() throws IOException {
    Files.createDirectories(BoxDataDir.stateDir(dir));
    Files.writeString(dir.resolve(".box-state/control-token"), "  abc-DEF_123\n");

    assertThat(BoxDataDir.readToken(BoxDataDir.tokenFile(dir))).isEqualTo("abc-DEF_123");
  }

  @Test
  void readToken_refusesAMissingEmptyOrMalformedFile_withoutQuotingIt() throws IOException {
    Path file = BoxDataDir.tokenFile(dir);
    assertThatThrownBy(() -> BoxDataDir.readToken(file)).isInstanceOf(NoSuchFileException.class);

    Files.createDirectories(file.getParent());
    Files.writeString(file, "\n\n");
    assertThatThrownBy(() -> BoxDataDir.readToken(file)).hasMessageEndingWith(" is empty");

    Files.writeString(file, "secret one");
    assertThatThrownBy(() -> BoxDataDir.readToken(file))
        .hasMessageEndingWith(" holds more than one word")
        .hasMessageNotContaining("secret");

    Files.writeString(file, "secr\u00e9t");
    assertThatThrownBy(() -> BoxDataDir.readToken(file))
        .hasMessageEndingWith(" holds characters other than visible ASCII");

    Path target = Files.writeString(dir.resolve("elsewhere"), "token");
    Files.delete(file);
    Files.createSymbolicLink(file, target);
    assertThatThrownBy(() -> BoxDataDir.readToken(file))
        .hasMessageEndingWith(" is a symbolic link");
    Files.delete(file);

    Files.writeString(file, "x".repeat(5000));
    assertThatThrownBy(() -> BoxDataDir.readToken(file))
        .hasMessageEndingWith(" holds more than 4096 bytes");
  }
}
