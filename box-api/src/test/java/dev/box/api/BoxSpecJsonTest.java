package dev.box.api;

import static dev.box.api.Validation.MAPPER;
import static dev.box.api.Validation.json;
import static dev.box.api.Validation.messageOfSpec;
import static dev.box.api.Validation.spec;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.entry;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * How a {@link BoxSpec} is read from and written to JSON: names, defaults, normalisation, types.
 */
class BoxSpecJsonTest {

  @Test
  void onlySessionId_givesEveryDefaultOfTheReference() throws Exception {
    BoxSpec spec = spec(json("{'session_id': 's1'}"));

    assertThat(spec.sessionId()).isEqualTo("s1");
    assertThat(spec.cmd()).isEmpty();
    assertThat(spec.workdir()).isEqualTo("/workspace");
    assertThat(spec.timeoutSec()).isEqualTo(30);
    assertThat(spec.network()).isEqualTo(BoxNetworkMode.OFF);
    assertThat(spec.env()).isEmpty();
    assertThat(spec.image()).isEqualTo("rockchin/langbot-sandbox:latest");
    assertThat(spec.hostPath()).isNull();
    assertThat(spec.hostPathMode()).isEqualTo(BoxHostMountMode.RW);
    assertThat(spec.mountPath()).isEqualTo("/workspace");
    assertThat(spec.extraMounts()).isEmpty();
    assertThat(spec.skillName()).isNull();
    assertThat(spec.persistent()).isFalse();
    assertThat(spec.cpus()).isEqualTo(1.0);
    assertThat(spec.memoryMb()).isEqualTo(512);
    assertThat(spec.pidsLimit()).isEqualTo(128);
    assertThat(spec.readOnlyRootfs()).isTrue();
    assertThat(spec.workspaceQuotaMb()).isZero();
  }

  @Test
  void builderDefaults_equalTheJsonDefaults() throws Exception {
    assertThat(BoxSpec.builder("s1").build()).isEqualTo(spec(json("{'session_id': 's1'}")));
  }

  @Test
  void defaultConstants_areTheReferenceValues() {
    assertThat(BoxSpec.DEFAULT_IMAGE).isEqualTo("rockchin/langbot-sandbox:latest");
    assertThat(BoxSpec.DEFAULT_MOUNT_PATH).isEqualTo("/workspace");
  }

  @Test
  void everyField_isReadFromItsSnakeCaseName() throws Exception {
    BoxSpec spec =
        spec(
            json(
                """
                {'cmd': 'ls -la', 'workdir': '/data/sub', 'timeout_sec': 90, 'network': 'on',
                 'session_id': 'abc', 'env': {'A': '1', 'B': 'two'}, 'image': 'python:3.12',
                 'host_path': '/srv/work', 'host_path_mode': 'ro', 'mount_path': '/data',
                 'extra_mounts': [{'host_path': '/srv/skills', 'mount_path': '/skills', 'mode': 'ro'}],
                 'skill_name': 'my-skill_1', 'persistent': true, 'cpus': 2.5, 'memory_mb': 2048,
                 'pids_limit': 300, 'read_only_rootfs': false, 'workspace_quota_mb': 100}
                """));

    assertThat(spec)
        .isEqualTo(
            BoxSpec.builder("abc")
                .cmd("ls -la")
                .workdir("/data/sub")
                .timeoutSec(90)
                .network(BoxNetworkMode.ON)
                .env(Map.of("A", "1", "B", "two"))
                .image("python:3.12")
                .hostPath("/srv/work")
                .hostPathMode(BoxHostMountMode.RO)
                .mountPath("/data")
                .extraMounts(
                    List.of(new BoxMountSpec("/srv/skills", "/skills", BoxHostMountMode.RO)))
                .skillName("my-skill_1")
                .persistent(true)
                .cpus(2.5)
                .memoryMb(2048)
                .pidsLimit(300)
                .readOnlyRootfs(false)
                .workspaceQuotaMb(100)
                .build());
  }

  @Test
  void unknownFields_areIgnored() throws Exception {
    BoxSpec spec =
        spec(json("{'session_id': 's1', 'bogus': 1, 'nested': {'x': [1, 2]}, 'profile': 'x'}"));

    assertThat(spec).isEqualTo(BoxSpec.builder("s1").build());
  }

  /** A missing or empty workdir follows mount_path; a given one is kept. */
  @ParameterizedTest(name = "{0} -> workdir {1}")
  @CsvSource(
      delimiter = '|',
      quoteCharacter = '"',
      textBlock =
          """
          'mount_path': '/data'                           | /data
          'mount_path': '/data', 'workdir': ''            | /data
          'host_path': '/srv/work', 'mount_path': '/data' | /data
          'mount_path': '/data', 'workdir': '/tmp'        | /tmp
          """)
  void workdir_followsMountPathUnlessGiven(String members, String workdir) throws Exception {
    BoxSpec spec = spec(json("{'session_id': 's1', " + members + "}"));

    assertThat(spec.workdir()).isEqualTo(workdir);
  }

  @Test
  void missingWorkdir_followsTheStrippedMountPath() throws Exception {
    BoxSpec spec = spec(json("{'session_id': 's1', 'mount_path': '  /data  '}"));

    assertThat(spec.workdir()).isEqualTo("/data");
    assertThat(spec.mountPath()).isEqualTo("/data");
  }

  /**
   * The reference copies mount_path into a missing workdir only when mount_path is a non-empty
   * string; an empty mount_path leaves workdir at its default, so the error names mount_path.
   */
  @Test
  void emptyMountPath_withoutWorkdir_isRefusedForTheMountPath() {
    assertThat(messageOfSpec(json("{'session_id': 's1', 'mount_path': ''}")))
        .isEqualTo("mount_path must be an absolute path inside the sandbox");
  }

  @Test
  void unknownFieldsOfAnExtraMount_areIgnored() throws Exception {
    BoxSpec spec =
        spec(
            json(
                "{'session_id': 's', 'extra_mounts': [{'host_path': '/a', 'mount_path': '/b',"
                    + " 'mode': 'ro', 'label': 'x'}]}"));

    assertThat(spec.extraMounts())
        .containsExactly(new BoxMountSpec("/a", "/b", BoxHostMountMode.RO));
  }

  @Test
  void integerCpus_isAccepted() throws Exception {
    assertThat(spec(json("{'session_id': 's', 'cpus': 2}")).cpus()).isEqualTo(2.0);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          cmd         | '  echo hi  '     | echo hi
          workdir     | ' /workspace/a '  | /workspace/a
          session_id  | '  s1  '          | s1
          mount_path  | ' /data '         | /data
          host_path   | '  /srv/work  '   | /srv/work
          skill_name  | '  my-skill  '    | my-skill
          """)
  void stringFields_areStripped(String field, String raw, String expected) throws Exception {
    String extra = field.equals("mount_path") ? ", \"workdir\": \"/data\"" : "";
    String idField = field.equals("session_id") ? "" : "\"session_id\": \"s\", ";
    JsonNode written =
        MAPPER.valueToTree(
            spec("{" + idField + "\"" + field + "\": \"" + raw + "\"" + extra + "}"));

    assertThat(written.get(field).asText()).isEqualTo(expected);
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "   ", "\\t"})
  void blankHostPath_meansNoHostPath(String blank) throws Exception {
    BoxSpec spec = spec("{\"session_id\": \"s\", \"host_path\": \"" + blank + "\"}");

    assertThat(spec.hostPath()).isNull();
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "   "})
  void blankSkillName_meansNoSkill(String blank) throws Exception {
    BoxSpec spec = spec("{\"session_id\": \"s\", \"skill_name\": \"" + blank + "\"}");

    assertThat(spec.skillName()).isNull();
  }

  @Test
  void envValues_areKeptExactly() throws Exception {
    BoxSpec spec =
        spec(json("{'session_id': 's', 'env': {'A': '  spaced  ', 'EMPTY': '', 'U': 'ünï ✓'}}"));

    assertThat(spec.env())
        .containsExactly(entry("A", "  spaced  "), entry("EMPTY", ""), entry("U", "ünï ✓"));
  }

  @Test
  void envScalarValues_areCoercedToStrings() throws Exception {
    BoxSpec spec = spec(json("{'session_id': 's', 'env': {'N': 1, 'B': true}}"));

    assertThat(spec.env()).containsEntry("N", "1").containsEntry("B", "true");
  }

  @Test
  void envOrder_isPreserved() throws Exception {
    BoxSpec spec = spec(json("{'session_id': 's', 'env': {'Z': '1', 'A': '2', 'M': '3'}}"));

    assertThat(spec.env().keySet()).containsExactly("Z", "A", "M");
  }

  @Test
  void extraMountWithoutMode_isReadWrite() throws Exception {
    BoxSpec spec =
        spec(
            json(
                "{'session_id': 's', 'extra_mounts': [{'host_path': '/srv/a', 'mount_path': '/a'}]}"));

    assertThat(spec.extraMounts())
        .containsExactly(new BoxMountSpec("/srv/a", "/a", BoxHostMountMode.RW));
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          network        | on    | ON
          network        | off   | OFF
          host_path_mode | none  | NONE
          host_path_mode | ro    | RO
          host_path_mode | rw    | RW
          """)
  void enumFields_acceptTheirLowerCaseWireNames(String field, String wire, String constant)
      throws Exception {
    BoxSpec spec = spec("{\"session_id\": \"s\", \"" + field + "\": \"" + wire + "\"}");

    Object value = field.equals("network") ? spec.network() : spec.hostPathMode();
    assertThat(((Enum<?>) value).name()).isEqualTo(constant);
  }

  @ParameterizedTest(name = "{0} = {1}")
  @CsvSource({
    "timeout_sec, 1.5",
    "timeout_sec, 30.0",
    "memory_mb, 512.5",
    "pids_limit, 1.0e2",
    "workspace_quota_mb, 0.5",
    "timeout_sec, 2147483648",
    "memory_mb, '\"lots\"'",
    "timeout_sec, '[30]'",
    "timeout_sec, '{}'",
    "cpus, '\"many\"'",
    "env, '[\"A=1\"]'",
    "extra_mounts, '\"/srv\"'"
  })
  void wrongJsonType_isRefused(String field, String value) {
    String body = "{\"session_id\": \"s\", \"" + field + "\": " + value + "}";

    assertThatThrownBy(() -> spec(body)).isInstanceOf(JsonProcessingException.class);
  }

  @Test
  void fromSnapshot_isRead() throws Exception {
    assertThat(spec(json("{'session_id': 's', 'from_snapshot': 'base-1.0'}")).fromSnapshot())
        .isEqualTo("base-1.0");
    assertThat(spec(json("{'session_id': 's', 'from_snapshot': ''}")).fromSnapshot()).isNull();
  }

  @ParameterizedTest
  @ValueSource(strings = {"../x", "a/b", ".hidden", "-x", "x y"})
  void fromSnapshot_thatIsNoName_isRefused(String name) {
    assertThat(messageOfSpec(json("{'session_id': 's', 'from_snapshot': '" + name + "'}")))
        .isEqualTo(
            "from_snapshot must be 1 to 64 letters, digits, '.', '-' or '_', starting with a"
                + " letter or digit");
  }

  @Test
  void fromSnapshot_withAHostPath_isRefused() {
    assertThat(
            messageOfSpec(json("{'session_id': 's', 'from_snapshot': 'a', 'host_path': '/srv/w'}")))
        .isEqualTo(
            "from_snapshot needs a private workspace: it cannot be combined with host_path or"
                + " host_path_mode none");
  }

  @Test
  void malformedJson_isRefused() {
    assertThatThrownBy(() -> spec("{\"session_id\": \"s\","))
        .isInstanceOf(JsonProcessingException.class);
  }

  @Test
  void missingSessionId_isRefusedAsEmpty() {
    assertThat(messageOfSpec("{}")).isEqualTo("session_id must not be empty");
  }

  @Test
  void spec_survivesARoundTripThroughJson() throws Exception {
    BoxSpec original =
        BoxSpec.builder("rt")
            .cmd("echo $A")
            .workdir("/data/x")
            .timeoutSec(7)
            .network(BoxNetworkMode.ON)
            .env("A", "1")
            .hostPath("C:\\Users\\me")
            .hostPathMode(BoxHostMountMode.RO)
            .mountPath("/data")
            .extraMounts(List.of(new BoxMountSpec("/srv/s", "/s", BoxHostMountMode.NONE)))
            .skillName("k")
            .persistent(true)
            .cpus(0.25)
            .memoryMb(64)
            .pidsLimit(9)
            .readOnlyRootfs(false)
            .workspaceQuotaMb(5)
            .egress(
                new BoxEgress(
                    List.of(Cidr.parse("198.51.100.7")), List.of(Cidr.parse("0.0.0.0/0"))))
            .build();

    String text = MAPPER.writeValueAsString(original);

    assertThat(MAPPER.readValue(text, BoxSpec.class)).isEqualTo(original);
  }

  @Test
  void spec_isWrittenWithSnakeCaseNamesAndLowerCaseEnums() {
    JsonNode node =
        MAPPER.valueToTree(
            BoxSpec.builder("s")
                .network(BoxNetworkMode.ON)
                .hostPathMode(BoxHostMountMode.NONE)
                .build());

    assertThat(node.fieldNames())
        .toIterable()
        .containsExactlyInAnyOrder(
            "cmd",
            "workdir",
            "timeout_sec",
            "network",
            "session_id",
            "env",
            "image",
            "host_path",
            "host_path_mode",
            "mount_path",
            "extra_mounts",
            "skill_name",
            "persistent",
            "cpus",
            "memory_mb",
            "pids_limit",
            "read_only_rootfs",
            "workspace_quota_mb",
            "egress",
            "from_snapshot");
    assertThat(node.get("network").asText()).isEqualTo("on");
    assertThat(node.get("host_path_mode").asText()).isEqualTo("none");
  }

  @Test
  void egress_readsAllowOutAndDenyOut_asCanonicalBlocks() throws Exception {
    BoxSpec spec =
        spec(
            "{\"session_id\": \"s\", \"egress\": {\"allow_out\": [\"198.51.100.7\"],"
                + " \"deny_out\": [\"10.1.2.3/8\", \"2001:db8::1/32\"]}}");

    assertThat(spec.egress().allowOut())
        .extracting(Cidr::toString)
        .containsExactly("198.51.100.7/32");
    assertThat(spec.egress().denyOut())
        .extracting(Cidr::toString)
        .containsExactly("10.0.0.0/8", "2001:db8:0:0:0:0:0:0/32");
    assertThat(MAPPER.valueToTree(spec).get("egress").get("deny_out").get(0).asText())
        .isEqualTo("10.0.0.0/8");
  }

  @Test
  void egress_refusesHostNames_andMalformedBlocks_namingTheField() {
    assertThat(
            messageOfSpec(
                "{\"session_id\": \"s\", \"egress\": {\"allow_out\": [\"example.invalid\"]}}"))
        .isEqualTo(
            "egress.allow_out: 'example.invalid' is not an IP address or CIDR block (host names are not"
                + " supported)");
    assertThat(
            messageOfSpec("{\"session_id\": \"s\", \"egress\": {\"deny_out\": [\"10.0.0.0/33\"]}}"))
        .isEqualTo("egress.deny_out: '10.0.0.0/33' has an invalid prefix length");
    assertThat(
            messageOfSpec("{\"session_id\": \"s\", \"egress\": {\"deny_out\": [\"300.1.1.1\"]}}"))
        .startsWith("egress.deny_out: '300.1.1.1' is not an IP address");
  }
}
