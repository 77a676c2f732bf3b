package dev.box.api;

import static dev.box.api.Validation.errorOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The built-in profiles of the reference and how a profile is applied to a request. */
class BoxProfileTest {

  @Test
  void builtins_areTheFourReferenceProfilesInNameOrder() {
    assertThat(BoxProfile.BUILTIN.keySet())
        .containsExactly("default", "network_basic", "network_extended", "offline_readonly");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    // name, network, host_path_mode, cpus, memory_mb, pids_limit, read_only_rootfs, timeout_sec,
    // max_timeout_sec, workspace_quota_mb
    "default,          OFF, RW, 1.0,  512, 128, true,  30, 120, 0",
    "offline_readonly, OFF, RO, 0.5,  256,  64, true,  30,  60, 0",
    "network_basic,    ON,  RW, 1.0,  512, 128, true,  30, 120, 0",
    "network_extended, ON,  RW, 2.0, 1024, 256, false, 30, 300, 0"
  })
  void builtin_hasTheReferenceValues(
      String name,
      BoxNetworkMode network,
      BoxHostMountMode hostPathMode,
      double cpus,
      int memoryMb,
      int pidsLimit,
      boolean readOnlyRootfs,
      int timeoutSec,
      int maxTimeoutSec,
      int workspaceQuotaMb) {
    BoxProfile profile = BoxProfile.named(name);

    assertThat(profile)
        .isEqualTo(
            new BoxProfile(
                name,
                "rockchin/langbot-sandbox:latest",
                network,
                timeoutSec,
                hostPathMode,
                maxTimeoutSec,
                new BoxLimits(cpus, memoryMb, pidsLimit, readOnlyRootfs, workspaceQuotaMb),
                profile.locked()));
  }

  static Stream<Arguments> lockedFields() {
    return Stream.of(
        Arguments.of("default", Set.of()),
        Arguments.of("network_basic", Set.of()),
        Arguments.of("network_extended", Set.of()),
        Arguments.of("offline_readonly", Set.of("network", "host_path_mode", "read_only_rootfs")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("lockedFields")
  void builtin_locksExactlyTheReferenceFields(String name, Set<String> locked) {
    assertThat(BoxProfile.named(name).locked()).containsExactlyInAnyOrderElementsOf(locked);
  }

  @Test
  void builtins_cannotBeChanged() {
    assertThatThrownBy(() -> BoxProfile.BUILTIN.remove("default"))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> BoxProfile.named("offline_readonly").locked().add("cpus"))
        .isInstanceOf(UnsupportedOperationException.class);
  }

  @ParameterizedTest
  @ValueSource(strings = {"default", "offline_readonly", "network_basic", "network_extended"})
  void named_findsTheBuiltin(String name) {
    assertThat(BoxProfile.named(name)).isSameAs(BoxProfile.BUILTIN.get(name)).isNotNull();
  }

  @ParameterizedTest
  @ValueSource(strings = {"turbo", "", "Default", " default"})
  void named_withAnUnknownName_listsTheAvailableProfiles(String name) {
    assertThat(errorOf(() -> BoxProfile.named(name)))
        .hasMessage(
            "unknown box profile '"
                + name
                + "', available profiles: default, network_basic, network_extended,"
                + " offline_readonly");
  }

  @Test
  void offlineReadonly_forcesItsLockedFieldsOverTheRequest() {
    BoxSpec request =
        BoxSpec.builder("s")
            .network(BoxNetworkMode.ON)
            .hostPath("/srv/w")
            .hostPathMode(BoxHostMountMode.RW)
            .readOnlyRootfs(false)
            .build();

    BoxSpec applied = BoxProfile.named("offline_readonly").apply(request);

    assertThat(applied.network()).isEqualTo(BoxNetworkMode.OFF);
    assertThat(applied.hostPathMode()).isEqualTo(BoxHostMountMode.RO);
    assertThat(applied.readOnlyRootfs()).isTrue();
  }

  @Test
  void unlockedFields_keepTheRequestedValues() {
    BoxSpec request =
        BoxSpec.builder("s")
            .network(BoxNetworkMode.ON)
            .cpus(0.25)
            .memoryMb(64)
            .pidsLimit(10)
            .image("python:3.12")
            .readOnlyRootfs(false)
            .workspaceQuotaMb(7)
            .hostPathMode(BoxHostMountMode.NONE)
            .build();

    assertThat(BoxProfile.named("default").apply(request)).isEqualTo(request);
    assertThat(BoxProfile.named("offline_readonly").apply(request))
        .extracting(
            BoxSpec::cpus,
            BoxSpec::memoryMb,
            BoxSpec::pidsLimit,
            BoxSpec::image,
            BoxSpec::workspaceQuotaMb)
        .containsExactly(0.25, 64, 10, "python:3.12", 7);
  }

  @Test
  void apply_keepsTheExecAndSessionFields() {
    BoxSpec request =
        BoxSpec.builder("sess")
            .cmd("make test")
            .env("A", "1")
            .hostPath("/srv/w")
            .mountPath("/data")
            .workdir("/data/sub")
            .skillName("sk")
            .persistent(true)
            .extraMounts(List.of(new BoxMountSpec("/srv/s", "/s", BoxHostMountMode.RO)))
            .build();

    BoxSpec applied = BoxProfile.named("offline_readonly").apply(request);

    assertThat(applied)
        .extracting(
            BoxSpec::sessionId,
            BoxSpec::cmd,
            BoxSpec::env,
            BoxSpec::hostPath,
            BoxSpec::mountPath,
            BoxSpec::workdir,
            BoxSpec::skillName,
            BoxSpec::persistent,
            BoxSpec::extraMounts)
        .containsExactly(
            request.sessionId(),
            request.cmd(),
            request.env(),
            request.hostPath(),
            request.mountPath(),
            request.workdir(),
            request.skillName(),
            request.persistent(),
            request.extraMounts());
  }

  @ParameterizedTest(name = "{0}: requested {1} -> {2}")
  @CsvSource({
    "default,          500, 120",
    "default,          121, 120",
    "default,          120, 120",
    "default,           10,  10",
    "offline_readonly, 120,  60",
    "offline_readonly,  61,  60",
    "offline_readonly,   1,   1",
    "network_basic,   9999, 120",
    "network_extended, 301, 300",
    "network_extended, 299, 299"
  })
  void requestedTimeout_isClampedToMaxTimeoutSec(String profile, int requested, int expected) {
    BoxSpec request = BoxSpec.builder("s").timeoutSec(requested).build();

    assertThat(BoxProfile.named(profile).apply(request).timeoutSec()).isEqualTo(expected);
  }

  /**
   * The nine fields the reference's {@code _apply_profile} overwrites when a profile locks them
   * (LangBot applies the profile when it builds a spec), with a request value that differs from the
   * profile's.
   */
  static Stream<Arguments> lockableFields() {
    return Stream.of(
        lockable("image", b -> b.image("other:1"), BoxSpec::image, "custom:1"),
        lockable(
            "network", b -> b.network(BoxNetworkMode.OFF), BoxSpec::network, BoxNetworkMode.ON),
        lockable("timeout_sec", b -> b.timeoutSec(90), BoxSpec::timeoutSec, 20),
        lockable(
            "host_path_mode",
            b -> b.hostPathMode(BoxHostMountMode.RW),
            BoxSpec::hostPathMode,
            BoxHostMountMode.NONE),
        lockable("cpus", b -> b.cpus(4.0), BoxSpec::cpus, 0.75),
        lockable("memory_mb", b -> b.memoryMb(4096), BoxSpec::memoryMb, 300),
        lockable("pids_limit", b -> b.pidsLimit(999), BoxSpec::pidsLimit, 33),
        lockable("read_only_rootfs", b -> b.readOnlyRootfs(true), BoxSpec::readOnlyRootfs, false),
        lockable("workspace_quota_mb", b -> b.workspaceQuotaMb(0), BoxSpec::workspaceQuotaMb, 50));
  }

  private static Arguments lockable(
      String field,
      Function<BoxSpec.Builder, BoxSpec.Builder> request,
      Function<BoxSpec, Object> read,
      Object profileValue) {
    return Arguments.of(field, request, read, profileValue);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("lockableFields")
  void lockedField_isForcedToTheProfileValue(
      String field,
      Function<BoxSpec.Builder, BoxSpec.Builder> request,
      Function<BoxSpec, Object> read,
      Object profileValue) {
    BoxProfile custom =
        new BoxProfile(
            "custom",
            "custom:1",
            BoxNetworkMode.ON,
            20,
            BoxHostMountMode.NONE,
            100,
            new BoxLimits(0.75, 300, 33, false, 50),
            Set.of(field));

    BoxSpec applied = custom.apply(request.apply(BoxSpec.builder("s")).build());

    assertThat(read.apply(applied)).isEqualTo(profileValue);
  }

  @Test
  void profileLocked_isCopied() {
    Set<String> locked = new java.util.HashSet<>(Set.of("network"));
    BoxProfile profile =
        new BoxProfile(
            "p",
            "i",
            BoxNetworkMode.OFF,
            30,
            BoxHostMountMode.RW,
            60,
            new BoxLimits(1, 64, 8, true, 0),
            locked);
    locked.add("cpus");

    assertThat(profile.locked()).containsExactly("network");
  }
}
