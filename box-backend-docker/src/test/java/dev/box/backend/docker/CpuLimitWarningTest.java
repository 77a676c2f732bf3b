package dev.box.backend.docker;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The warning logged when the CPU quota of containers is turned off names the engine. */
class CpuLimitWarningTest {

  @Test
  void docker_keepsTheReferenceText() {
    assertThat(ContainerBackend.cpuLimitDisabledWarning("docker"))
        .isEqualTo(
            "Docker sandbox CPU limit is disabled by config (box.docker.cpu_limit_enabled=false);"
                + " containers will be started without --cpus.");
  }

  @Test
  void podman_namesPodmanAndItsSection() {
    assertThat(ContainerBackend.cpuLimitDisabledWarning("podman"))
        .isEqualTo(
            "Podman sandbox CPU limit is disabled by config (box.podman.cpu_limit_enabled=false);"
                + " containers will be started without --cpus.");
  }
}
