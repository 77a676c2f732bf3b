package dev.box.core.files;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.box.api.BoxValidationException;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link TarGuard} on archives the host's GNU tar writes in each of its formats: long names and
 * link targets (GNU {@code L}/{@code K} headers, pax {@code path}/{@code linkpath}) pass through
 * unchanged, and a climbing name or link is refused whichever header carries it.
 */
class TarGuardTest {
  @TempDir Path dir;

  private byte[] tar(String format, String... members) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of("tar", "-c", "-f", "-", "--format=" + format));
    command.addAll(List.of(members));
    Process tar = new ProcessBuilder(command).directory(dir.toFile()).start();
    byte[] bytes = tar.getInputStream().readAllBytes();
    assertThat(tar.waitFor()).as(new String(tar.getErrorStream().readAllBytes())).isZero();
    return bytes;
  }

  private static TarGuard.Summary check(byte[] tar) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    TarGuard.Summary summary = TarGuard.copy(new ByteArrayInputStream(tar), out, 1 << 24, 100);
    // What tar writes after its end-of-archive blocks is zero padding, which is not copied.
    assertThat(out.toByteArray()).isEqualTo(java.util.Arrays.copyOf(tar, out.size()));
    return summary;
  }

  @ParameterizedTest
  @ValueSource(strings = {"gnu", "pax", "ustar"})
  void longNamesAndInTreeLinks_passUnchanged(String format) throws Exception {
    String longDir = "d".repeat(60) + "/" + "e".repeat(60);
    Files.createDirectories(dir.resolve(longDir));
    Files.writeString(dir.resolve(longDir).resolve("file.txt"), "x");
    Files.createSymbolicLink(
        dir.resolve(longDir).resolve("link"), Path.of("../../" + "d".repeat(60)));

    byte[] tar = tar(format, ".");
    TarGuard.Summary summary = check(tar);

    assertThat(summary.entries()).isEqualTo(5);
    assertThat(summary.bytes()).isEqualTo(tar.length);
  }

  @ParameterizedTest
  @ValueSource(strings = {"gnu", "pax"})
  void aClimbingLongLinkTarget_isRefused(String format) throws Exception {
    Files.createSymbolicLink(dir.resolve("up"), Path.of("../".repeat(60) + "etc"));

    byte[] tar = tar(format, "up");

    assertThatThrownBy(() -> check(tar))
        .isInstanceOf(BoxValidationException.class)
        .hasMessageContaining("archive entry 'up' is a symbolic link out of the directory");
  }

  @ParameterizedTest
  @ValueSource(strings = {"gnu", "pax"})
  void aClimbingLongName_isRefused(String format) throws Exception {
    Path deep = Files.createDirectories(dir.resolve("a".repeat(120)));
    Files.writeString(deep.resolve("f"), "x");
    byte[] tar =
        tar(format, "--transform=s,^a*,../" + "b".repeat(120) + ",", "a".repeat(120) + "/f");

    assertThatThrownBy(() -> check(tar))
        .isInstanceOf(BoxValidationException.class)
        .hasMessageContaining("leads out of the directory with '..'");
  }
}
