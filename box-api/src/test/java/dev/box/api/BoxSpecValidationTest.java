package dev.box.api;

import static dev.box.api.Validation.errorOf;
import static dev.box.api.Validation.json;
import static dev.box.api.Validation.messageOfSpec;
import static dev.box.api.Validation.spec;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The validation rules of {@link BoxSpec}, each with the exact message of the reference. */
class BoxSpecValidationTest {

  /**
   * JSON members added to {@code "session_id": "s"}, and the message the binding must fail with.
   */
  static Stream<Arguments> refusedSpecs() {
    return Stream.of(
            refused("session_id must not be empty", "'session_id': ''", "'session_id': '   '"),
            refused("timeout_sec must be greater than 0", "'timeout_sec': 0", "'timeout_sec': -1"),
            refused(
                "memory_mb must be at least 32",
                "'memory_mb': 31",
                "'memory_mb': 0",
                "'memory_mb': -512"),
            refused(
                "workdir must be an absolute path inside the sandbox",
                "'workdir': 'workspace'",
                "'workdir': './x'",
                "'workdir': '~/x'",
                "'workdir': '   '"),
            refused(
                "mount_path must be an absolute path inside the sandbox",
                "'mount_path': 'data', 'workdir': '/data'",
                "'mount_path': '', 'workdir': '/data'"),
            refused(
                "host_path must be an absolute host path",
                "'host_path': 'relative/dir'",
                "'host_path': './dir'",
                "'host_path': '~/dir'",
                "'host_path': 'C:relative'"),
            refused(
                "workdir must stay under mount_path when host_path is provided",
                "'host_path': '/srv/w', 'workdir': '/tmp'",
                "'host_path': '/srv/w', 'workdir': '/workspace2'",
                "'host_path': '/srv/w', 'workdir': '/'",
                "'host_path': '/srv/w', 'host_path_mode': 'ro', 'workdir': '/etc'",
                "'host_path': '/srv/w', 'mount_path': '/data', 'workdir': '/workspace'"),
            refused(
                "skill_name can only contain up to 64 letters, numbers, hyphens and underscores",
                "'skill_name': 'has space'",
                "'skill_name': 'a/b'",
                "'skill_name': 'dotted.name'",
                "'skill_name': 'ünicode'",
                "'skill_name': '" + "a".repeat(65) + "'"),
            refused("env key 'A=B' is not a valid variable name", "'env': {'A=B': '1'}"),
            refused("env key '=' is not a valid variable name", "'env': {'=': '1'}"),
            refused("env key '' is not a valid variable name", "'env': {'': '1'}"))
        .flatMap(cases -> cases);
  }

  /** Each of {@code members} with the one {@code message} they are all refused with. */
  private static Stream<Arguments> refused(String message, String... members) {
    return Stream.of(members).map(member -> Arguments.of(member, message));
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @MethodSource("refusedSpecs")
  void brokenRule_isRefusedWithTheReferenceMessage(String members, String message) {
    assertThat(messageOfSpec(json("{'session_id': 's', " + members + "}"))).isEqualTo(message);
  }

  static Stream<Arguments> refusedBuilders() {
    return Stream.of(
        Arguments.of(op(b -> b.sessionId(" ")), "session_id must not be empty"),
        Arguments.of(op(b -> b.timeoutSec(0)), "timeout_sec must be greater than 0"),
        Arguments.of(op(b -> b.memoryMb(31)), "memory_mb must be at least 32"),
        Arguments.of(
            op(b -> b.workdir("rel")), "workdir must be an absolute path inside the sandbox"),
        Arguments.of(
            op(b -> b.mountPath("rel")), "mount_path must be an absolute path inside the sandbox"),
        Arguments.of(op(b -> b.hostPath("rel")), "host_path must be an absolute host path"),
        Arguments.of(
            op(b -> b.hostPath("/srv").workdir("/tmp")),
            "workdir must stay under mount_path when host_path is provided"),
        Arguments.of(
            op(b -> b.skillName("no!")),
            "skill_name can only contain up to 64 letters, numbers, hyphens and underscores"),
        Arguments.of(op(b -> b.env("K=V", "x")), "env key 'K=V' is not a valid variable name"));
  }

  @ParameterizedTest(name = "[{index}] {1}")
  @MethodSource("refusedBuilders")
  void builder_appliesTheSameRules(UnaryOperator<BoxSpec.Builder> change, String message) {
    BoxValidationException error = errorOf(() -> change.apply(BoxSpec.builder("s")).build());

    assertThat(error).hasMessage(message);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {"/srv/work", "/", "C:\\Users\\me", "c:/data", "D:\\", "\\\\server\\share\\x"})
  void absolutePosixOrWindowsHostPath_isAccepted(String hostPath) throws Exception {
    BoxSpec spec = BoxSpec.builder("s").hostPath(hostPath).build();

    assertThat(spec.hostPath()).isEqualTo(hostPath);
  }

  @ParameterizedTest
  @ValueSource(strings = {"/workspace", "/workspace/a", "/workspace/a/b/c"})
  void workdirUnderMountPath_withHostPath_isAccepted(String workdir) {
    BoxSpec spec = BoxSpec.builder("s").hostPath("/srv/w").workdir(workdir).build();

    assertThat(spec.workdir()).isEqualTo(workdir);
  }

  @Test
  void workdirOutsideMountPath_withHostPathModeNone_isAccepted() throws Exception {
    BoxSpec spec =
        spec(
            json(
                "{'session_id': 's', 'host_path': '/srv/w', 'host_path_mode': 'none', 'workdir': '/tmp'}"));

    assertThat(spec.workdir()).isEqualTo("/tmp");
  }

  @Test
  void stringsTheKernelWouldNotPassToTheSandbox_areRefused() {
    String longest = "x".repeat(ModelRules.MAX_ARGUMENT_BYTES);

    assertThat(BoxSpec.builder("s").cmd(longest).build().cmd()).hasSize(longest.length());
    assertThatThrownBy(() -> BoxSpec.builder("s").cmd(longest + "x").build())
        .isInstanceOf(BoxValidationException.class)
        .hasMessage("cmd is 131072 bytes; the most is 131071");
    assertThatThrownBy(() -> BoxSpec.builder("s").cmd("true").env("K", longest).build())
        .hasMessage("env entry K is 131073 bytes; the most is 131071");
    java.util.Map<String, String> big = new java.util.LinkedHashMap<>();
    for (int i = 0; i < 10; i++) {
      big.put("K" + i, "v".repeat(120_000));
    }
    assertThatThrownBy(() -> BoxSpec.builder("s").cmd("true").env(big).build())
        .hasMessageStartingWith("env is about ")
        .hasMessageEndingWith(" bytes in all; the most is 1048576");
    assertThatThrownBy(() -> BoxManagedProcessSpec.of("cat", longest + "x"))
        .hasMessage("an argument is 131072 bytes; the most is 131071");
  }

  @Test
  void workdirOutsideMountPath_withoutHostPath_isAccepted() throws Exception {
    assertThat(spec(json("{'session_id': 's', 'workdir': '/tmp'}")).workdir()).isEqualTo("/tmp");
  }

  @Test
  void workdirUnderRootMountPath_withHostPath_isAccepted() {
    BoxSpec spec = BoxSpec.builder("s").hostPath("/srv").mountPath("/").workdir("/tmp").build();

    assertThat(spec.workdir()).isEqualTo("/tmp");
  }

  @Test
  void emptyCmd_isAcceptedByTheModel() throws Exception {
    assertThat(spec(json("{'session_id': 's', 'cmd': '   '}")).cmd()).isEmpty();
  }

  @ParameterizedTest
  @CsvSource({"timeout_sec, 1", "memory_mb, 32", "pids_limit, 1", "workspace_quota_mb, 0"})
  void lowestAllowedValue_isAccepted(String field, int value) throws Exception {
    BoxSpec spec = spec("{\"session_id\": \"s\", \"" + field + "\": " + value + "}");

    assertThat(Validation.MAPPER.valueToTree(spec).get(field).asInt()).isEqualTo(value);
  }

  @Test
  void skillNameOf64AllowedCharacters_isAccepted() {
    String name = "Ab0-_".repeat(12) + "abcd";

    assertThat(BoxSpec.builder("s").skillName(name).build().skillName()).isEqualTo(name);
  }

  @ParameterizedTest
  @CsvSource({"pids_limit, 0", "pids_limit, -1", "workspace_quota_mb, -1", "cpus, 0", "cpus, -0.5"})
  void outOfRangeLimit_isRefusedNamingTheField(String field, String value) {
    String message = messageOfSpec("{\"session_id\": \"s\", \"" + field + "\": " + value + "}");

    assertThat(message).startsWith(field + " must be");
  }

  @ParameterizedTest
  @ValueSource(doubles = {Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY})
  void nonFiniteCpus_isRefused(double cpus) {
    assertThat(errorOf(() -> BoxSpec.builder("s").cpus(cpus).build()))
        .hasMessage("cpus must be greater than 0");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          network                      | maybe | network
          network                      | ''    | network
          network                      | 1     | network
          host_path_mode               | rwx   | host_path_mode
          host_path_mode               | read  | host_path_mode
          """)
  void unknownEnumValue_isAValidationError(String field, String value, String named) {
    String message = messageOfSpec("{\"session_id\": \"s\", \"" + field + "\": \"" + value + "\"}");

    assertThat(message).startsWith(named + " must be one of").contains("'" + value + "'");
  }

  @Test
  void unknownNetworkValue_listsTheAllowedValues() {
    assertThat(messageOfSpec(json("{'session_id': 's', 'network': 'maybe'}")))
        .isEqualTo("network must be one of off, on, not 'maybe'");
  }

  @Test
  void unknownExtraMountMode_isAValidationError() {
    String message =
        messageOfSpec(
            json(
                "{'session_id': 's', 'extra_mounts': [{'host_path': '/a', 'mount_path': '/a', 'mode': 'x'}]}"));

    assertThat(message).contains("must be one of none, ro, rw");
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"cmd", "workdir", "session_id", "mount_path", "host_path"})
  void nulCharacterInAStringField_isRefused(String field) {
    String value = field.equals("cmd") || field.equals("session_id") ? "a\\u0000b" : "/a\\u0000b";
    String members =
        field.equals("mount_path")
            ? "\"mount_path\": \"" + value + "\", \"workdir\": \"/a\""
            : "\"" + field + "\": \"" + value + "\"";
    String idField = field.equals("session_id") ? "" : "\"session_id\": \"s\", ";

    assertThat(messageOfSpec("{" + idField + members + "}"))
        .isEqualTo(field + " must not contain NUL characters");
  }

  @Test
  void nulCharacterInAnEnvValue_isRefused() {
    assertThat(messageOfSpec("{\"session_id\": \"s\", \"env\": {\"A\": \"x\\u0000y\"}}"))
        .isEqualTo("env value of A must not contain NUL characters");
  }

  @Test
  void nulCharacterInAnEnvKey_isRefused() {
    assertThat(messageOfSpec("{\"session_id\": \"s\", \"env\": {\"A\\u0000B\": \"x\"}}"))
        .startsWith("env key");
  }

  @Test
  void envGivenToTheSpec_isCopiedAndUnmodifiable() {
    Map<String, String> env = new LinkedHashMap<>();
    env.put("A", "1");
    BoxSpec spec = BoxSpec.builder("s").env(env).build();
    env.put("B", "2");

    assertThat(spec.env()).containsOnlyKeys("A");
    assertThatThrownBy(() -> spec.env().put("C", "3"))
        .isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void extraMountsGivenToTheSpec_areCopiedAndUnmodifiable() {
    List<BoxMountSpec> mounts = new java.util.ArrayList<>();
    mounts.add(new BoxMountSpec("/a", "/a", BoxHostMountMode.RO));
    BoxSpec spec = BoxSpec.builder("s").extraMounts(mounts).build();
    mounts.clear();

    assertThat(spec.extraMounts()).hasSize(1);
    assertThatThrownBy(() -> spec.extraMounts().clear())
        .isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void toBuilder_rebuildsAnEqualSpec() {
    BoxSpec spec =
        BoxSpec.builder("s")
            .cmd("x")
            .hostPath("/srv")
            .mountPath("/m")
            .workdir("/m/w")
            .env("K", "V")
            .skillName("sk")
            .extraMounts(List.of(new BoxMountSpec("/a", "/b", BoxHostMountMode.RO)))
            .build();

    assertThat(spec.toBuilder().build()).isEqualTo(spec);
  }

  @ParameterizedTest
  @EnumSource(BoxHostMountMode.class)
  void extraMount_keepsItsMode(BoxHostMountMode mode) {
    assertThat(new BoxMountSpec("/a", "/b", mode).mode()).isEqualTo(mode);
  }

  @Test
  void extraMountPaths_areStripped() {
    BoxMountSpec mount = new BoxMountSpec("  C:\\skills ", " /skills  ", BoxHostMountMode.RO);

    assertThat(mount.hostPath()).isEqualTo("C:\\skills");
    assertThat(mount.mountPath()).isEqualTo("/skills");
  }

  static Stream<Arguments> refusedMounts() {
    return Stream.of(
        Arguments.of("{'mount_path': '/a'}", "host_path is required"),
        Arguments.of("{'host_path': '/a'}", "mount_path is required"),
        Arguments.of(
            "{'host_path': 'rel', 'mount_path': '/a'}", "host_path must be an absolute host path"),
        Arguments.of(
            "{'host_path': '/a', 'mount_path': 'rel'}",
            "mount_path must be an absolute path inside the sandbox"));
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @MethodSource("refusedMounts")
  void brokenExtraMount_isRefusedWithItsMessage(String mount, String message) {
    assertThat(messageOfSpec(json("{'session_id': 's', 'extra_mounts': [" + mount + "]}")))
        .isEqualTo(message);
  }

  private static UnaryOperator<BoxSpec.Builder> op(UnaryOperator<BoxSpec.Builder> op) {
    return op;
  }
}
