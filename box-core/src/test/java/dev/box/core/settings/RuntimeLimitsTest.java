package dev.box.core.settings;

import static org.assertj.core.api.Assertions.assertThat;

import dev.box.core.RuntimeConfig;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The table's defaults and ranges: for the keys LangBot knows they are those of LangBot's own Box
 * runtime, which LangBot's {@code box.limits} assume.
 */
class RuntimeLimitsTest {

  @Test
  void theKeysLangBotKnows_haveItsDefaultsAndRanges() {
    assertThat(RuntimeLimits.MAX_SESSIONS).isEqualTo(new IntSetting("max_sessions", 64, 0, 5000));
    assertThat(RuntimeLimits.MAX_MANAGED_PROCESSES)
        .isEqualTo(new IntSetting("max_managed_processes", 64, 0, 1024));
    assertThat(RuntimeLimits.MAX_COMPLETED_PROCESSES)
        .isEqualTo(new IntSetting("max_completed_processes", 256, 0, 10_000));
    assertThat(RuntimeLimits.MAX_ADMISSION_RECORDS)
        .isEqualTo(new IntSetting("max_admission_records", 100_000, 1, 250_000));
    assertThat(RuntimeLimits.MAX_RPC_FILE_BYTES)
        .isEqualTo(new IntSetting("max_rpc_file_bytes", 20 * 1024 * 1024, 1, 100 * 1024 * 1024));
    assertThat(RuntimeLimits.COMPLETED_PROCESS_RETENTION_SEC)
        .isEqualTo(new IntSetting("completed_process_retention_sec", 300, 0, 86_400));
  }

  @Test
  void theServersOwnKeys_keepTheirDefaultsAndRanges() {
    assertThat(RuntimeLimits.SESSION_TTL_SEC)
        .isEqualTo(new IntSetting("session_ttl_sec", 300, 0, 30 * 86_400));
    assertThat(RuntimeLimits.MAX_OUTPUT_BYTES)
        .isEqualTo(new IntSetting("max_output_bytes", 1024 * 1024, 1024, 256 * 1024 * 1024));
    assertThat(RuntimeLimits.PROCESS_BUFFER_BYTES)
        .isEqualTo(new IntSetting("process_buffer_bytes", 1024 * 1024, 1024, 256 * 1024 * 1024));
  }

  @Test
  void runtimeConfigDefaults_areTheTables() {
    RuntimeConfig defaults = RuntimeConfig.defaults(Path.of("/data"));

    assertThat(defaults.sessionTtl()).isEqualTo(Duration.ofMinutes(5));
    assertThat(defaults.maxSessions()).isEqualTo(64);
    assertThat(defaults.maxOutputBytes()).isEqualTo(1024 * 1024);
    assertThat(defaults.processes())
        .isEqualTo(new RuntimeConfig.ProcessLimits(64, 256, Duration.ofSeconds(300), 1024 * 1024));
  }
}
