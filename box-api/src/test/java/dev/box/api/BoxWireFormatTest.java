package dev.box.api;

import static dev.box.api.Validation.MAPPER;
import static dev.box.api.Validation.errorOf;
import static dev.box.api.Validation.json;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The JSON form of what the server answers: session infos, exec results, health and status. */
class BoxWireFormatTest {
  private static final Instant CREATED = Instant.parse("2025-01-02T03:04:05Z");
  private static final Instant USED = Instant.parse("2025-01-02T03:04:06.250Z");

  private static BoxSessionInfo info() {
    return new BoxSessionInfo(
        "s1",
        "bwrap",
        "inst_s1-0a1b2c3d",
        BoxSpec.DEFAULT_IMAGE,
        BoxNetworkMode.ON,
        "/srv/work",
        BoxHostMountMode.RO,
        "/workspace",
        true,
        1.5,
        256,
        64,
        false,
        10,
        CREATED,
        USED,
        BoxSessionState.PAUSED);
  }

  private static BoxExecutionResult result(BoxExecutionStatus status, @Nullable Integer exitCode) {
    return new BoxExecutionResult("s1", "bwrap", status, exitCode, "out\n", "err", 42, 3, 4);
  }

  @Test
  void sessionInfo_isWrittenWithTheReferenceSnakeCaseNames() {
    JsonNode node = MAPPER.valueToTree(info());

    assertThat(node.fieldNames())
        .toIterable()
        .containsExactlyInAnyOrder(
            "session_id",
            "backend_name",
            "backend_session_id",
            "image",
            "network",
            "host_path",
            "host_path_mode",
            "mount_path",
            "persistent",
            "cpus",
            "memory_mb",
            "pids_limit",
            "read_only_rootfs",
            "workspace_quota_mb",
            "created_at",
            "last_used_at",
            "state");
    assertThat(node.get("session_id").asText()).isEqualTo("s1");
    assertThat(node.get("backend_session_id").asText()).isEqualTo("inst_s1-0a1b2c3d");
    assertThat(node.get("network").asText()).isEqualTo("on");
    assertThat(node.get("host_path_mode").asText()).isEqualTo("ro");
    assertThat(node.get("cpus").asDouble()).isEqualTo(1.5);
    assertThat(node.get("read_only_rootfs").asBoolean()).isFalse();
    assertThat(node.get("state").asText()).isEqualTo("paused");
  }

  @Test
  void sessionInfoInstants_areIso8601Strings() {
    JsonNode node = MAPPER.valueToTree(info());

    assertThat(node.get("created_at").isTextual()).isTrue();
    assertThat(node.get("created_at").asText()).isEqualTo("2025-01-02T03:04:05Z");
    assertThat(node.get("last_used_at").asText()).isEqualTo("2025-01-02T03:04:06.250Z");
  }

  @Test
  void sessionInfoWithoutHostPath_writesNull() {
    BoxSessionInfo info = info();
    BoxSessionInfo privateWorkspace =
        new BoxSessionInfo(
            info.sessionId(),
            info.backendName(),
            info.backendSessionId(),
            info.image(),
            info.network(),
            null,
            info.hostPathMode(),
            info.mountPath(),
            info.persistent(),
            info.cpus(),
            info.memoryMb(),
            info.pidsLimit(),
            info.readOnlyRootfs(),
            info.workspaceQuotaMb(),
            info.createdAt(),
            info.lastUsedAt(),
            info.state());

    JsonNode node = MAPPER.valueToTree(privateWorkspace);

    assertThat(node.has("host_path")).isTrue();
    assertThat(node.get("host_path").isNull()).isTrue();
  }

  @Test
  void sessionInfo_survivesARoundTripThroughJson() throws Exception {
    String text = MAPPER.writeValueAsString(info());

    assertThat(MAPPER.readValue(text, BoxSessionInfo.class)).isEqualTo(info());
  }

  @Test
  void sessionInfo_readsThePythonIsoFormatWithAnOffset() throws Exception {
    JsonNode node = MAPPER.valueToTree(info());
    ((com.fasterxml.jackson.databind.node.ObjectNode) node)
        .put("created_at", "2025-01-02T03:04:05.000000+00:00");

    BoxSessionInfo read = MAPPER.treeToValue(node, BoxSessionInfo.class);

    assertThat(read.createdAt()).isEqualTo(CREATED);
  }

  @Test
  void executionResult_isWrittenWithSnakeCaseNamesAndTheDerivedOk() {
    JsonNode node = MAPPER.valueToTree(result(BoxExecutionStatus.COMPLETED, 0));

    assertThat(node.fieldNames())
        .toIterable()
        .containsExactlyInAnyOrder(
            "session_id",
            "backend_name",
            "status",
            "exit_code",
            "stdout",
            "stderr",
            "duration_ms",
            "stdout_truncated_bytes",
            "stderr_truncated_bytes",
            "ok");
    assertThat(node.get("status").asText()).isEqualTo("completed");
    assertThat(node.get("exit_code").asInt()).isZero();
    assertThat(node.get("stdout").asText()).isEqualTo("out\n");
    assertThat(node.get("duration_ms").asLong()).isEqualTo(42);
    assertThat(node.get("stdout_truncated_bytes").asLong()).isEqualTo(3);
    assertThat(node.get("stderr_truncated_bytes").asLong()).isEqualTo(4);
    assertThat(node.get("ok").isBoolean()).isTrue();
  }

  @ParameterizedTest(name = "{0} exit {1} -> ok {2}")
  @CsvSource({
    "COMPLETED, 0, true",
    "COMPLETED, 1, false",
    "COMPLETED, -1, false",
    "COMPLETED, 137, false",
    "COMPLETED, , false",
    "TIMED_OUT, , false",
    "TIMED_OUT, 0, false"
  })
  void ok_isTrueOnlyForACompletedExitZero(
      BoxExecutionStatus status, @Nullable Integer exitCode, boolean ok) {
    BoxExecutionResult result = result(status, exitCode);

    assertThat(result.ok()).isEqualTo(ok);
    assertThat(MAPPER.valueToTree(result).get("ok").asBoolean()).isEqualTo(ok);
  }

  @Test
  void timedOutResult_writesTimedOutAndANullExitCode() {
    JsonNode node = MAPPER.valueToTree(result(BoxExecutionStatus.TIMED_OUT, null));

    assertThat(node.get("status").asText()).isEqualTo("timed_out");
    assertThat(node.has("exit_code")).isTrue();
    assertThat(node.get("exit_code").isNull()).isTrue();
  }

  @Test
  void executionResult_survivesARoundTripThroughJson() throws Exception {
    for (BoxExecutionResult result :
        new BoxExecutionResult[] {
          result(BoxExecutionStatus.COMPLETED, 3), result(BoxExecutionStatus.TIMED_OUT, null)
        }) {
      String text = MAPPER.writeValueAsString(result);

      assertThat(MAPPER.readValue(text, BoxExecutionResult.class)).isEqualTo(result);
    }
  }

  @Test
  void unknownExecutionStatus_isAValidationError() {
    String body =
        json(
            "{'session_id': 's', 'backend_name': 'b', 'status': 'done', 'exit_code': 0,"
                + " 'stdout': '', 'stderr': '', 'duration_ms': 1,"
                + " 'stdout_truncated_bytes': 0, 'stderr_truncated_bytes': 0}");

    assertThat(errorOf(() -> MAPPER.readValue(body, BoxExecutionResult.class)))
        .hasMessage("status must be one of completed, timed_out, not 'done'");
  }

  @Test
  void status_isWrittenWithSnakeCaseNames() {
    BoxRuntimeStatus status =
        new BoxRuntimeStatus(
            new BoxBackendHealth("bwrap", true, "ok", Map.of("memory", "cgroup")),
            2,
            0,
            300,
            Map.of("max_sessions", 64));

    JsonNode node = MAPPER.valueToTree(status);

    assertThat(node.fieldNames())
        .toIterable()
        .containsExactlyInAnyOrder(
            "backend", "active_sessions", "managed_processes", "session_ttl_sec", "limits");
    assertThat(node.get("active_sessions").asInt()).isEqualTo(2);
    assertThat(node.get("session_ttl_sec").asLong()).isEqualTo(300);
    assertThat(node.get("limits").get("max_sessions").asInt()).isEqualTo(64);
    assertThat(node.get("backend").get("name").asText()).isEqualTo("bwrap");
    assertThat(node.get("backend").get("available").asBoolean()).isTrue();
    assertThat(node.get("backend").get("enforced").get("memory").asText()).isEqualTo("cgroup");
  }
}
