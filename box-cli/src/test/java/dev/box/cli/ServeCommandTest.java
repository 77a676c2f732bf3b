package dev.box.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

import dev.box.server.ServerConfig;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
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

  @Test
  void help_printsTheUsage_andSucceeds() {
    CommandLine alone = BoxCli.serveCommandLine();
    StringWriter out = new StringWriter();
    alone.setOut(new PrintWriter(out));
    assertThat(alone.execute("--help")).isZero();
    assertThat(out.toString()).startsWith("Usage: box serve ").contains("--data-dir=DIR");
  }

  /** What picocli would give {@code serve} for these arguments: its flags and the stdio switch. */
  private static Serve.Direct picocli(String... args) {
    CommandLine alone = BoxCli.serveCommandLine();
    alone.parseArgs(args);
    ServeCommand serve = alone.getCommand();
    return new Serve.Direct(serve.flags(), alone.getParseResult().hasMatchedOption("-s"));
  }

  @Test
  void argumentsReadWithoutPicocli_areReadAsPicocliReadsThem() {
    List<List<String>> cases =
        List.of(
            List.of(),
            List.of("--port=1", "--insecure"),
            List.of("--port", "1", "--data-dir", "/d", "--backend=bwrap"),
            List.of("--ws-control-port", "5"),
            List.of("--ws-control-port=5", "-s"),
            List.of("--stdio-control", "--host=0.0.0.0", "--allowed-mount-roots=/a,/b"),
            List.of("--control-token=a=b", "--max-sessions", "1100"),
            List.of("--image", "box-agent:latest", "--e2b-envd-url=http://x/{sandboxID}"));
    for (List<String> args : cases) {
      assertThat(Serve.direct(args)).as("%s", args).isEqualTo(picocli(args.toArray(String[]::new)));
    }
  }

  @Test
  void argumentsPicocliMustRead_areLeftToIt() {
    List<List<String>> cases =
        List.of(
            List.of("--help"),
            List.of("-h"),
            List.of("--port"),
            List.of("--port="),
            List.of("--port=1", "--port=2"),
            List.of("--port=1", "--ws-control-port=2"),
            List.of("--insecure", "--insecure"),
            List.of("-s", "--stdio-control"),
            List.of("--host", "--port=1"),
            List.of("--port", "-1"),
            List.of("--bogus=1"),
            List.of("@args.txt"),
            List.of("--host", "@h"),
            List.of("--insecure=true"),
            List.of("-sx"),
            List.of("--", "--port=1"),
            List.of("extra"));
    for (List<String> args : cases) {
      assertThat(Serve.direct(args)).as("%s", args).isNull();
    }
  }
}
