package dev.box.backend.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.box.api.BoxValidationException;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The CPU quota switch: LangBot's {@code cpu_limit_enabled} turns it off and on again, and the
 * warning logged when it is off names the engine.
 */
class CpuQuotaTest {

  @Test
  void docker_keepsTheReferenceText() {
    assertThat(CpuQuota.disabledWarning("docker"))
        .isEqualTo(
            "Docker sandbox CPU limit is disabled by config (box.docker.cpu_limit_enabled=false);"
                + " containers will be started without --cpus.");
  }

  @Test
  void podman_namesPodmanAndItsSection() {
    assertThat(CpuQuota.disabledWarning("podman"))
        .isEqualTo(
            "Podman sandbox CPU limit is disabled by config (box.podman.cpu_limit_enabled=false);"
                + " containers will be started without --cpus.");
  }

  @ParameterizedTest
  @CsvSource({"0, false", "false, false", "' False ', false", "1, true", "yes, true"})
  void configure_readsAStringAsOnUnlessItIsZeroOrFalse(String value, boolean enabled) {
    CpuQuota quota = new CpuQuota("docker", !enabled);

    assertThat(quota.configure(Map.of("cpu_limit_enabled", value))).isTrue();
    assertThat(quota.enabled()).isEqualTo(enabled);
  }

  @Test
  void configure_withABoolean_changesOnlyWhatDiffers() {
    CpuQuota quota = new CpuQuota("docker", true);

    assertThat(quota.configure(Map.of("cpu_limit_enabled", true))).isFalse();
    assertThat(quota.configure(Map.of("other", false))).isFalse();
    assertThat(quota.enabled()).isTrue();
    assertThat(quota.configure(Map.of("cpu_limit_enabled", false))).isTrue();
    assertThat(quota.enabled()).isFalse();
  }

  @Test
  void configure_refusesAnythingButABooleanOrAString() {
    CpuQuota quota = new CpuQuota("podman", true);

    assertThatThrownBy(() -> quota.configure(Map.of("cpu_limit_enabled", 1)))
        .isInstanceOf(BoxValidationException.class)
        .hasMessage("box.podman.cpu_limit_enabled must be a boolean or a string");
    assertThat(quota.enabled()).isTrue();
  }
}
