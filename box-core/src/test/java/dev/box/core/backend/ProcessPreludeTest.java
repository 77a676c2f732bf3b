package dev.box.core.backend;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The prelude every backend starts a process with, run as backends run it ({@code /bin/sh -c SCRIPT
 * sh}, everything else in the environment) by the host's {@code /bin/sh}.
 */
@Timeout(30)
class ProcessPreludeTest {
  @TempDir Path dir;

  @Test
  void argv_reachesTheProgramWordForWord_andThePreludesVariablesAreGone() throws Exception {
    ProcessSpec spec =
        new ProcessSpec(
            new ProcessSpec.Argv(
                List.of("sh", "-c", "printf '[%s]' \"$@\"; env | grep -c __BOX_ || true", "x")),
            dir.toString(),
            Map.of(),
            false);

    assertThat(run(spec)).isEqualTo("[]0\n");

    ProcessSpec words =
        new ProcessSpec(
            new ProcessSpec.Argv(List.of("printf", "[%s]", "a b", "'q\"", "$HOME", "")),
            dir.toString(),
            Map.of(),
            false);
    assertThat(run(words)).isEqualTo("[a b]['q\"][$HOME][]");
  }

  @Test
  void shell_runsInTheWorkdir_createdWhenMissing_withStdinClosed() throws Exception {
    Path workdir = dir.resolve("new/dir");
    ProcessSpec spec =
        new ProcessSpec(
            new ProcessSpec.Shell("pwd; cat; echo \"$GREETING\" \"${__BOX_SCRIPT-unset}\""),
            workdir.toString(),
            Map.of("GREETING", "hi"),
            false);

    assertThat(run(spec)).isEqualTo(workdir + "\nhi unset\n");
    assertThat(workdir).isDirectory();
  }

  @Test
  void aWorkdirThatCannotBeEntered_exits126() throws Exception {
    Path file = Files.writeString(dir.resolve("file"), "");
    ProcessSpec spec =
        new ProcessSpec(new ProcessSpec.Shell("echo ran"), file.toString(), Map.of(), false);

    Process process = start(spec);
    assertThat(process.waitFor(10, TimeUnit.SECONDS)).isTrue();
    assertThat(process.exitValue()).isEqualTo(126);
    assertThat(read(process)).isEmpty();
  }

  private static String run(ProcessSpec spec) throws Exception {
    Process process = start(spec);
    String out = read(process);
    assertThat(process.waitFor(10, TimeUnit.SECONDS)).isTrue();
    assertThat(process.exitValue()).as(out).isZero();
    return out;
  }

  private static Process start(ProcessSpec spec) throws IOException {
    ProcessBuilder builder =
        new ProcessBuilder("/bin/sh", "-c", ProcessPrelude.SCRIPT, "sh")
            .redirectError(ProcessBuilder.Redirect.DISCARD);
    builder.environment().putAll(ProcessPrelude.environment(spec, 0));
    return builder.start();
  }

  private static String read(Process process) throws IOException {
    return new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
  }
}
