package dev.box.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

import dev.box.server.ServerConfig;
import java.util.Objects;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The options of {@code box serve} reach {@link ServerConfig#resolve} by their setting's key. */
class ServeCommandTest {

  private static ServeCommand parsed(String... args) {
    CommandLine cli = BoxCli.newCommandLine();
    cli.parseArgs(args);
    return Objects.requireNonNull(cli.getSubcommands().get("serve")).getCommand();
  }

  @Test
  void everyGivenOption_isPassedAsTyped_underItsKey() {
    ServeCommand serve =
        parsed(
            "serve",
            "--host=h",
            "--port=1",
            "--config=c.yaml",
            "--data-dir=d",
            "--backend=b",
            "--image=i",
            "--docker-host=dh",
            "--podman-host=ph",
            "--seccomp-profile=s.json",
            "--control-token=t",
            "--insecure",
            "--session-ttl-sec=2",
            "--max-sessions=3",
            "--max-output-bytes=4",
            "--allowed-mount-roots=/a,/b");

    assertThat(serve.flags())
        .containsOnly(
            entry("host", "h"),
            entry("port", "1"),
            entry("config", "c.yaml"),
            entry("data_dir", "d"),
            entry("backend", "b"),
            entry("image", "i"),
            entry("docker_host", "dh"),
            entry("podman_host", "ph"),
            entry("seccomp_profile", "s.json"),
            entry("control_token", "t"),
            entry("insecure", "true"),
            entry("session_ttl_sec", "2"),
            entry("max_sessions", "3"),
            entry("max_output_bytes", "4"),
            entry("allowed_mount_roots", "/a,/b"));
  }

  @Test
  void theAliasOfPort_isThePort() {
    assertThat(parsed("serve", "--ws-control-port", "5").flags()).containsOnly(entry("port", "5"));
  }

  @Test
  void optionsNotGiven_areLeftToTheEnvironmentAndTheConfigFile() {
    assertThat(parsed("serve").flags()).isEmpty();
  }

  @Test
  void serveAlone_parsesTheSameOptions_andItsUsageIsTheSame() {
    CommandLine alone = BoxCli.serveCommandLine();
    alone.parseArgs("--port=1", "--insecure");
    ServeCommand serve = alone.getCommand();
    assertThat(serve.flags()).containsOnly(entry("port", "1"), entry("insecure", "true"));

    CommandLine underBox =
        Objects.requireNonNull(BoxCli.newCommandLine().getSubcommands().get("serve"));
    assertThat(alone.getUsageMessage())
        .startsWith("Usage: box serve ")
        .isEqualTo(underBox.getUsageMessage());
  }
}
