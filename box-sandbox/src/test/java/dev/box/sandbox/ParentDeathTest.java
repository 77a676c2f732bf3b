package dev.box.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

import dev.box.core.backend.HostCommand;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A guarded jail command, run for real: it runs while its server lives, with its standard input; it
 * never runs when its server is gone before it could; and it dies with its server, with what it
 * forked, when the server is killed.
 */
class ParentDeathTest {
  private Path setpriv = Path.of("/usr/bin/setpriv");
  private Path setsid = Path.of("/usr/bin/setsid");

  @BeforeEach
  void findUtilLinux() {
    Path foundSetpriv = HostCommand.find("setpriv");
    Path foundSetsid = HostCommand.find("setsid");
    assumeThat(foundSetpriv).as("setpriv (util-linux) is installed").isNotNull();
    assumeThat(foundSetsid).as("setsid (util-linux) is installed").isNotNull();
    setpriv = Objects.requireNonNull(foundSetpriv);
    setsid = Objects.requireNonNull(foundSetsid);
  }

  @Test
  void theCommandOfALiveServer_runs_withItsStandardInput_andExitsAsItDoes() throws Exception {
    Process p =
        new ProcessBuilder(
                ParentDeath.guarded(
                    setpriv,
                    setsid,
                    ProcessHandle.current().pid(),
                    List.of("/bin/sh", "-c", "read -r line; echo \"ran $line\"; exit 3")))
            .redirectErrorStream(true)
            .start();
    p.getOutputStream().write("given\n".getBytes(StandardCharsets.UTF_8));
    p.getOutputStream().close();
    assertThat(new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8))
        .isEqualTo("ran given\n");
    assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).isEqualTo(3);
  }

  @Test
  void aCommandWhoseServerIsGoneBeforeItRuns_neverRuns() throws Exception {
    // Its parent is not the server it was started for: as after a server that died before the
    // parent-death signal was armed, when the command was reparented to init.
    Process p =
        new ProcessBuilder(ParentDeath.guarded(setpriv, setsid, 1, List.of("/bin/echo", "ran")))
            .redirectErrorStream(true)
            .start();
    assertThat(new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8)).isEmpty();
    assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).isEqualTo(ParentDeath.SERVER_GONE);
  }

  @Test
  void aCommandWhoseServerIsKilled_diesWithIt_andSoDoesWhatItForked() throws Exception {
    // A stand-in server: a shell that starts the guarded command for its own pid, and waits. The
    // command forks a child that waits too, as bwrap's clone waits to be released.
    List<String> guarded =
        ParentDeath.guarded(
            setpriv, setsid, 0, List.of("/bin/sh", "-c", "sleep 300 & echo $!; wait", "jail"));
    guarded.set(guarded.indexOf("0"), "PARENT");
    List<String> argv = new ArrayList<>();
    argv.addAll(
        List.of(
            "/bin/sh",
            "-c",
            "for a do shift; [ \"$a\" = PARENT ] && a=$$; set -- \"$@\" \"$a\"; done; \"$@\" & wait",
            "server"));
    argv.addAll(guarded);
    Process server = new ProcessBuilder(argv).start();
    long forked = 0;
    try (BufferedReader out =
        new BufferedReader(
            new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8))) {
      long pid = Long.parseLong(Objects.requireNonNull(out.readLine()).strip());
      forked = pid;
      assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive)).contains(true);
      server.destroyForcibly(); // SIGKILL: the stand-in has no chance to kill anything
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> ProcessHandle.of(pid).map(h -> !h.isAlive()).orElse(true));
    } finally {
      server.destroyForcibly();
      if (forked > 0) {
        ProcessHandle.of(forked).ifPresent(ProcessHandle::destroyForcibly);
      }
    }
  }
}
