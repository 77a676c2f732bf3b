package dev.box.agenthost;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.box.api.BoxHostMountMode;
import dev.box.api.BoxNetworkMode;
import dev.box.api.BoxProfile;
import dev.box.api.BoxValidationException;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The reference's {@code _apply_profile}: locked overwrites, absent fills, timeout clamped. */
class ProfileRulesTest {

  /** profile, requested network, host_path_mode, read-only rootfs, timeout → expected. */
  static Stream<Arguments> cases() {
    return Stream.of(
        // default: nothing locked, absent fields filled, timeout clamped to 120.
        Arguments.of("default", null, null, null, null, "off", "rw", true, 30),
        Arguments.of("default", "on", "ro", false, 90, "on", "ro", false, 90),
        Arguments.of("default", null, null, null, 500, "off", "rw", true, 120),
        Arguments.of("default", null, null, null, 120, "off", "rw", true, 120),
        // offline_readonly: network, host_path_mode and read_only_rootfs locked; max 60.
        Arguments.of("offline_readonly", "on", "rw", false, 45, "off", "ro", true, 45),
        Arguments.of("offline_readonly", null, null, null, 61, "off", "ro", true, 60),
        // network_basic: on by default, but the caller may turn it off.
        Arguments.of("network_basic", null, null, null, null, "on", "rw", true, 30),
        Arguments.of("network_basic", "off", null, null, 121, "off", "rw", true, 120),
        // network_extended: writable rootfs by default, max 300.
        Arguments.of("network_extended", null, null, null, 299, "on", "rw", false, 299),
        Arguments.of("network_extended", null, null, true, 1000, "on", "rw", true, 300));
  }

  @ParameterizedTest(name = "{0}: network={1} mode={2} ro={3} timeout={4}")
  @MethodSource("cases")
  void apply_locksFillsAndClamps(
      String profile,
      String network,
      String mode,
      Boolean readOnly,
      Integer timeout,
      String wantNetwork,
      String wantMode,
      boolean wantReadOnly,
      int wantTimeout) {
    ExecRequest request =
        ExecRequest.builder("true")
            .sandbox(
                SandboxSettings.builder()
                    .network(network == null ? null : BoxNetworkMode.fromWire(network))
                    .hostPathMode(mode == null ? null : BoxHostMountMode.fromWire(mode))
                    .readOnlyRootfs(readOnly)
                    .build())
            .timeoutSec(timeout)
            .build();

    ExecRequest applied = ProfileRules.apply(BoxProfile.named(profile), request);

    assertThat(applied.sandbox().network()).isEqualTo(BoxNetworkMode.fromWire(wantNetwork));
    assertThat(applied.sandbox().hostPathMode()).isEqualTo(BoxHostMountMode.fromWire(wantMode));
    assertThat(applied.sandbox().readOnlyRootfs()).isEqualTo(wantReadOnly);
    assertThat(applied.timeoutSec()).isEqualTo(wantTimeout);
  }

  @Test
  void absentResources_takeTheProfiles_andGivenOnesStay() {
    BoxProfile offline = BoxProfile.named("offline_readonly");
    SandboxSettings filled = ProfileRules.apply(offline, ExecRequest.of("true")).sandbox();
    assertThat(filled.cpus()).isEqualTo(0.5);
    assertThat(filled.memoryMb()).isEqualTo(256);
    assertThat(filled.pidsLimit()).isEqualTo(64);
    assertThat(filled.workspaceQuotaMb()).isZero();
    assertThat(filled.image()).isEqualTo(offline.image());

    SandboxSettings asked = SandboxSettings.builder().cpus(2.0).memoryMb(1024).image("x").build();
    SandboxSettings own =
        ProfileRules.apply(offline, ExecRequest.builder("true").sandbox(asked).build()).sandbox();
    assertThat(own.cpus()).as("not locked").isEqualTo(2.0);
    assertThat(own.memoryMb()).isEqualTo(1024);
    assertThat(own.image()).isEqualTo("x");
  }

  @Test
  void unknownProfile_namesTheKnownOnes() {
    assertThatThrownBy(() -> BoxProfile.named("gpu"))
        .isInstanceOf(BoxValidationException.class)
        .hasMessage(
            "unknown box profile 'gpu', available profiles: default, network_basic,"
                + " network_extended, offline_readonly");
  }
}
