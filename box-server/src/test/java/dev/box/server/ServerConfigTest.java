package dev.box.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.box.core.RuntimeConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * How {@code box serve} reads its settings: the defaults, the integers with their ranges and
 * messages, and each boolean with every spelling it has always accepted.
 */
class ServerConfigTest {
  @TempDir Path dir;

  private static ServerConfig flag(String key, String value) {
    return ServerConfig.resolve(Map.of(key, value), Map.of());
  }

  @Test
  void e2b_theEnvironmentsKeyWinsOverTheFile_andNoKeyIsEverPrinted() throws IOException {
    Path file = dir.resolve("box.yaml");
    Files.writeString(file, "e2b_api_key: from-the-file\ne2b_template: mine\n");

    ServerConfig fromFile = ServerConfig.resolve(Map.of("config", file.toString()), Map.of());
    ServerConfig fromEnv =
        ServerConfig.resolve(
            Map.of("config", file.toString()), Map.of("E2B_API_KEY", "from-the-env"));

    assertThat(fromFile.e2b().apiKey()).isEqualTo("from-the-file");
    assertThat(fromFile.e2b().template()).isEqualTo("mine");
    assertThat(fromEnv.e2b().apiKey()).isEqualTo("from-the-env");
    assertThat(fromFile.toString()).doesNotContain("from-the-file");
    assertThat(fromEnv.toString()).doesNotContain("from-the-env");
    assertThat(ServerConfig.defaults().e2b().apiKey()).isNull();
  }

  @Test
  void boxlite_readsItsUrlTokenAndImage_theTokenAlsoFromTheEnvironment_neverPrinted()
      throws IOException {
    Path file = dir.resolve("box.yaml");
    Files.writeString(
        file, "boxlite_url: http://10.0.0.5:8100/\nboxlite_token: tok-file\nimage: python:3.12\n");

    ServerConfig fromFile = ServerConfig.resolve(Map.of("config", file.toString()), Map.of());
    ServerConfig fromEnv =
        ServerConfig.resolve(
            Map.of("config", file.toString()), Map.of("BOX_BOXLITE_TOKEN", "tok-env"));

    assertThat(fromFile.boxlite().url()).isEqualTo("http://10.0.0.5:8100");
    assertThat(fromFile.boxlite().token()).isEqualTo("tok-file");
    assertThat(fromFile.boxlite().image()).isEqualTo("python:3.12");
    assertThat(fromEnv.boxlite().token()).isEqualTo("tok-env");
    assertThat(fromFile.toString()).doesNotContain("tok-file");
    assertThat(fromEnv.toString()).doesNotContain("tok-env");
    assertThat(ServerConfig.defaults().boxlite().url()).isEqualTo("http://127.0.0.1:8100");
    assertThat(ServerConfig.defaults().boxlite().token()).isNull();
    assertThatThrownBy(() -> flag("boxlite_url", "ftp://host"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("boxlite_url must be an http(s) URL of a host (and a path), not 'ftp://host'");
  }

  @Test
  void replicaUrl_isAnHttpUrlOfAHost_orRefusedWithTheKey() {
    assertThat(ServerConfig.defaults().replicaUrl()).isNull();
    assertThat(flag("replica_url", " http://10.1.2.3:5410/ ").replicaUrl())
        .hasToString("http://10.1.2.3:5410");
    assertThat(flag("replica_url", "https://[fd00::1]:5410").replicaUrl())
        .hasToString("https://[fd00::1]:5410");
    for (String bad :
        new String[] {
          "10.1.2.3:5410", "ftp://host", "http://user@host", "http://host/box", "http://host?x=1"
        }) {
      assertThatThrownBy(() -> flag("replica_url", bad))
          .as(bad)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("replica_url");
    }
  }

  @Test
  void publicUrl_isAnHttpUrlWithAnOptionalPath_orRefusedWithTheKey() {
    assertThat(ServerConfig.defaults().publicUrl()).isNull();
    Map<String, String> accepted =
        Map.of(
            " https://box.example.com/ ", "https://box.example.com",
            "https://proxy:8443/tools/box/", "https://proxy:8443/tools/box");
    accepted.forEach(
        (given, kept) -> assertThat(flag("public_url", given).publicUrl()).hasToString(kept));
    List.of("box.example.com", "ftp://host", "http://user@host", "http://host?x=1")
        .forEach(
            bad ->
                assertThatThrownBy(() -> flag("public_url", bad))
                    .as(bad)
                    .hasMessageContaining("public_url"));
  }

  @Test
  void defaults() {
    ServerConfig config = ServerConfig.defaults();

    assertThat(config.host()).isEqualTo("127.0.0.1");
    assertThat(config.port()).isEqualTo(5410);
    assertThat(config.backend()).isEqualTo("local");
    assertThat(config.backendFixed()).isFalse();
    assertThat(config.insecure()).isFalse();
    assertThat(config.sessionTtl()).isEqualTo(Duration.ofSeconds(300));
    assertThat(config.pausedSessionTtl()).isEqualTo(Duration.ofDays(1));
    assertThat(config.maxSessions()).isEqualTo(64);
    assertThat(config.maxOutputBytes()).isEqualTo(1024 * 1024);
    assertThat(config.processLimits())
        .isEqualTo(new RuntimeConfig.ProcessLimits(64, 256, Duration.ofSeconds(300), 1024 * 1024));
    assertThat(config.cgroups()).isTrue();
    assertThat(config.containers().cpuLimit()).isTrue();
    assertThat(config.containers().pullTimeout()).isEqualTo(Duration.ofSeconds(300));
    assertThat(config.isolation().sandboxUid()).isEqualTo(IsolationConfig.DEFAULT_SANDBOX_UID);
  }

  @Test
  void integers_acceptSurroundingWhitespaceAndASign_andBlankMeansTheDefault() {
    assertThat(flag("max_sessions", " 12 ").maxSessions()).isEqualTo(12);
    assertThat(flag("max_sessions", "+12").maxSessions()).isEqualTo(12);
    assertThat(flag("max_sessions", "").maxSessions()).isEqualTo(64);
    assertThat(flag("port", "0").port()).isZero();
    assertThat(flag("session_ttl_sec", "0").sessionTtl()).isZero();
    assertThat(flag("paused_session_ttl_sec", "0").pausedSessionTtl()).isZero();
    assertThat(flag("paused_session_ttl_sec", "60").pausedSessionTtl())
        .isEqualTo(Duration.ofMinutes(1));
    assertThat(flag("pull_timeout_sec", "3600").containers().pullTimeout())
        .isEqualTo(Duration.ofHours(1));
    assertThat(flag("sandbox_uid", "2147483647").isolation().sandboxUid())
        .isEqualTo(Integer.MAX_VALUE);
    assertThat(flag("pool_size", "").isolation().poolSize()).isEqualTo(2);
    assertThat(flag("pool_size", "0").isolation().poolSize()).isZero();
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "port                  | 65536 | port must be between 0 and 65535",
        "max_managed_processes | 1025  | max_managed_processes must be between 0 and 1024",
        "process_buffer_bytes  | 1023  | process_buffer_bytes must be between 1024 and 268435456",
        "pull_timeout_sec      | 0     | pull_timeout_sec must be between 1 and 3600",
        "sandbox_uid           | 0     | sandbox_uid must be between 1 and 2147483647",
        "pool_size             | 65    | pool_size must be between 0 and 64",
        "max_sessions          | many  | max_sessions must be an integer, not 'many'",
        "paused_session_ttl_sec | -1   | paused_session_ttl_sec must be between 0 and 31536000",
        "paused_session_ttl_sec | day  | paused_session_ttl_sec must be an integer, not 'day'",
      })
  void integers_outOfRangeOrNotIntegers_areRefusedWithTheKey(
      String key, String value, String message) {
    assertThatThrownBy(() -> flag(key, value))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(message);
  }

  @Test
  void insecure_isOnlyTheExactWordTrue_inAnyCase() {
    for (String on : new String[] {"true", "TRUE", "True"}) {
      assertThat(flag("insecure", on).insecure()).as("'%s'", on).isTrue();
    }
    for (String off : new String[] {"false", "1", "yes", "on", " true", "true ", ""}) {
      assertThat(flag("insecure", off).insecure()).as("'%s'", off).isFalse();
    }
  }

  @Test
  void cgroups_isOnUnlessFalse_andZeroKeepsItOn() {
    for (String off : new String[] {"false", "FALSE", " false "}) {
      assertThat(flag("cgroups", off).cgroups()).as("'%s'", off).isFalse();
    }
    for (String on : new String[] {"true", "0", "no", "off", "1", ""}) {
      assertThat(flag("cgroups", on).cgroups()).as("'%s'", on).isTrue();
    }
  }

  @Test
  void dockerCpuLimit_isOnUnlessFalseOrZero_asLangBotReadsCpuLimitEnabled() {
    for (String off : new String[] {"false", "False", "0", " 0 ", " false"}) {
      assertThat(flag("docker_cpu_limit", off).containers().cpuLimit()).as("'%s'", off).isFalse();
    }
    for (String on : new String[] {"true", "1", "no", "off", ""}) {
      assertThat(flag("docker_cpu_limit", on).containers().cpuLimit()).as("'%s'", on).isTrue();
    }
  }

  @Test
  void metrics_areOnUnlessFalse_andOpenOnlyForTheExactWordTrue() {
    assertThat(ServerConfig.defaults().metrics()).isEqualTo(MetricsConfig.DEFAULTS);
    assertThat(flag("metrics", "false").metrics().enabled()).isFalse();
    assertThat(flag("metrics", "0").metrics().enabled()).isTrue();
    assertThat(flag("metrics_open", "true").metrics().open()).isTrue();
    assertThat(flag("metrics_open", "1").metrics().open()).isFalse();
    assertThat(ServerConfig.resolve(Map.of(), Map.of("BOX_METRICS_OPEN", "true")).metrics().open())
        .isTrue();
  }

  @Test
  void aYamlFile_givesBooleansAndIntegersAsYamlTypesThem() throws IOException {
    Path file = dir.resolve("box.yaml");
    Files.writeString(
        file,
        """
        insecure: true
        cgroups: false
        docker_cpu_limit: 0
        max_sessions: 9
        max-output-bytes: "2048"
        """);

    ServerConfig config = ServerConfig.resolve(Map.of("config", file.toString()), Map.of());

    assertThat(config.insecure()).isTrue();
    assertThat(config.cgroups()).isFalse();
    assertThat(config.containers().cpuLimit()).isFalse();
    assertThat(config.maxSessions()).isEqualTo(9);
    assertThat(config.maxOutputBytes()).isEqualTo(2048);
  }

  @Test
  void flagsWinOverTheEnvironment_whichWinsOverTheFile() throws IOException {
    Path file = dir.resolve("box.json");
    Files.writeString(file, "{\"max_sessions\": 1, \"max_completed_processes\": 1}");
    Map<String, String> env =
        Map.of("BOX_CONFIG", file.toString(), "BOX_MAX_SESSIONS", "2", "BOX_CGROUPS", "false");

    ServerConfig config = ServerConfig.resolve(Map.of("max_sessions", "3"), env);

    assertThat(config.maxSessions()).isEqualTo(3);
    assertThat(config.processLimits().maxCompleted()).isEqualTo(1);
    assertThat(config.cgroups()).isFalse();
  }
}
