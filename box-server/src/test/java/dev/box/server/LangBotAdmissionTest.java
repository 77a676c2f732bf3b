package dev.box.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.box.testclient.Answer;
import dev.box.testclient.BoxHttp;
import dev.box.testclient.OptionalPiece;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.HexFormat;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * LangBot's deployment as it really is, through the real server and its control channel: the
 * runtime's data dir is LangBot's {@code host_root}, and LangBot's grant-enforced mode, which fails
 * closed here (its required backend is nsjail, this server runs bwrap, and the host has cgroup v1).
 */
class LangBotAdmissionTest {
  private static final String TOKEN = LangBotServers.TOKEN;
  private static final String INSTANCE = LangBotServers.INSTANCE;

  @TempDir Path dir;
  private @Nullable BoxServer server;

  private BoxServer start(Path dataDir) {
    return start(dataDir, "bwrap");
  }

  private BoxServer start(Path dataDir, String backend) {
    BoxServer started =
        LangBotServers.start(dataDir, Map.of("backend", backend), LangBotServers.ENV, false);
    server = started;
    return started;
  }

  private BoxServer server() {
    return Objects.requireNonNull(server, "started");
  }

  @AfterEach
  void stop() {
    if (server != null) {
      server.close();
    }
  }

  private RpcClient connect() {
    return RpcClient.connect(
        server().port(),
        Map.of("X-LangBot-Box-Control-Token", TOKEN, "X-LangBot-Instance-Id", INSTANCE));
  }

  private static String context(String workspace) {
    return LangBotServers.context(workspace, 1);
  }

  private static String message(JsonNode response) {
    return response.path("message").asText();
  }

  private static String local(Path hostRoot) {
    return "\"local\": {\"host_root\": \""
        + hostRoot
        + "\", \"default_workspace\": \"\", \"skills_root\": \"skills\","
        + " \"allowed_mount_roots\": [\""
        + hostRoot
        + "\", \"/tmp\"]}";
  }

  @Test
  void withLangBotsDefaults_theDataDirIsTheHostRoot_andItsTenantDirectoriesAreUsable()
      throws IOException {
    Path dataDir = dir.resolve("data/box");
    start(dataDir);
    Path tenant = dataDir.resolve("default/tenants/ws-abc");
    try (RpcClient rpc = connect()) {
      assertThat(message(rpc.call("box_init", "{" + local(dataDir) + "}", null)))
          .isEqualTo("success");
      // LangBot makes the tenant directory itself, as the user it runs as (here root, 0755).
      Files.createDirectories(tenant);
      assertThat(Files.getAttribute(tenant, "unix:uid")).isEqualTo(0);

      JsonNode exec =
          rpc.callData(
              "box_exec",
              "{\"session_id\": \"chat\", \"cmd\": \"echo from-sandbox > note.txt; cat"
                  + " note.txt\", \"host_path\": \""
                  + tenant
                  + "\"}",
              context("ws"));
      assertThat(exec.path("stdout").asText()).isEqualTo("from-sandbox");
      assertThat(tenant.resolve("note.txt")).hasContent("from-sandbox\n");
      assertThat(Files.getAttribute(tenant, "unix:uid"))
          .as("handed to the sandbox user: the default workspace is the runtime's")
          .isEqualTo(2_000_000);
      Path operators = Files.createDirectories(dir.resolve("data/box/operators-own"));
      assertThat(
              message(
                  rpc.call(
                      "box_exec",
                      "{\"session_id\": \"own\", \"cmd\": \"true\", \"host_path\": \""
                          + operators
                          + "\"}",
                      context("ws"))))
          .as("outside the default workspace, a directory keeps its owner: used idmapped")
          .isEqualTo("success");
      assertThat(Files.getAttribute(operators, "unix:uid")).isEqualTo(0);

      for (Path refused : new Path[] {dataDir.resolve(".box-state"), dataDir}) {
        assertThat(
                message(
                    rpc.call(
                        "box_exec",
                        "{\"session_id\": \"other\", \"cmd\": \"ls\", \"host_path\": \""
                            + refused
                            + "\"}",
                        context("ws"))))
            .isEqualTo("BoxValidationError: host_path " + refused + " is blocked for security");
      }
    }
    assertThat(dataDir.resolve(".box-state/control-token")).doesNotExist();
    assertThat(dataDir.resolve(".box-state/box.lock")).exists();
  }

  @Test
  void admissionRequired_failsClosed_onEverySandboxAction_andSaysWhichChecksFail()
      throws IOException, InterruptedException {
    Path hostRoot = Files.createDirectories(dir.resolve("langbot/data/box"));
    start(dir.resolve("runtime"));
    try (RpcClient rpc = connect()) {
      assertThat(
              message(
                  rpc.call(
                      "box_init",
                      "{\"admission\": {\"required\": true}, " + local(hostRoot) + "}",
                      null)))
          .isEqualTo("success");

      assertThat(message(rpc.call("box_health", "{}", null)))
          .isEqualTo("BoxReadinessError: managed sandbox isolation is not ready");
      JsonNode info = rpc.callData("box_get_backend_info", "{}", null);
      assertThat(info.path("name").asText()).isEqualTo("bwrap");
      assertThat(info.path("available").asBoolean()).isFalse();
      JsonNode checks = info.path("readiness").path("checks");
      assertThat(checks.path("configuration").asBoolean()).isTrue();
      assertThat(checks.path("workspace_mount").asBoolean()).isTrue();
      assertThat(checks.path("required_backend").asBoolean()).isFalse();
      assertThat(checks.path("namespace_isolation").asBoolean()).isFalse();
      assertThat(info.path("readiness").path("mode").asText()).isEqualTo("grant_enforced");
      assertThat(info.path("readiness").path("error").asText())
          .isEqualTo("grant-enforced mode requires the nsjail backend; this runtime runs bwrap");

      String ctx = context("ws");
      for (String[] action :
          new String[][] {
            {"box_exec", "{\"session_id\": \"global\", \"cmd\": \"echo hi\"}"},
            {"box_create_session", "{\"session_id\": \"global\"}"},
            {"box_get_sessions", "{}"},
            {"box_get_session", "{\"session_id\": \"global\"}"},
            {"box_delete_session", "{\"session_id\": \"global\"}"},
            {
              "box_start_managed_process",
              "{\"session_id\": \"global\", \"spec\": {\"command\": \"cat\"}}"
            },
          }) {
        assertThat(message(rpc.call(action[0], action[1], ctx)))
            .as(action[0])
            .startsWith(
                "BoxReadinessError: Managed sandbox isolation is not ready (failed checks:"
                    + " required_backend, backend_available, cgroup_v2,");
      }
      assertThat(server().sessions().list()).isEmpty();
      assertThat(message(rpc.call("box_status", "{}", ctx))).isEqualTo("success");

      // A grant can be installed, but it admits nothing while readiness does not hold.
      String grant =
          "{\"instance_uuid\": \""
              + INSTANCE
              + "\", \"workspace_uuid\": \"ws\", \"execution_generation\": 1,"
              + " \"entitlement_revision\": 1, \"expires_at\": \""
              + OffsetDateTime.now(ZoneOffset.UTC).plusSeconds(120)
              + "\", \"max_sessions\": 1, \"max_managed_processes\": 0}";
      JsonNode installed = rpc.callData("box_upsert_sandbox_admission_grant", grant, null);
      assertThat(installed.path("installed").asBoolean()).isTrue();
      assertThat(
              message(rpc.call("box_exec", "{\"session_id\": \"global\", \"cmd\": \"id\"}", ctx)))
          .startsWith("BoxReadinessError: Managed sandbox isolation is not ready");
      assertThat(
              message(
                  rpc.call(
                      "box_upsert_sandbox_admission_grant",
                      grant.replace(INSTANCE, "someone-else"),
                      null)))
          .isEqualTo(
              "PermissionError: Sandbox admission grant does not match the trusted instance");
      assertThat(
              rpc.callData(
                      "box_revoke_sandbox_admission_grant",
                      "{\"instance_uuid\": \""
                          + INSTANCE
                          + "\", \"workspace_uuid\": \"ws\", \"entitlement_revision\": 2}",
                      null)
                  .path("revoked")
                  .asBoolean())
          .isTrue();
      assertThat(message(rpc.call("box_upsert_sandbox_admission_grant", grant, null)))
          .isEqualTo("BoxAdmissionError: Sandbox admission grant revision was revoked");

      // Turning it off again is refused, and readiness then fails on its configuration too.
      assertThat(message(rpc.call("box_init", "{\"admission\": {\"required\": false}}", null)))
          .isEqualTo("success");
      JsonNode after = rpc.callData("box_get_backend_info", "{}", null);
      assertThat(after.path("readiness").path("checks").path("configuration").asBoolean())
          .isFalse();
      assertThat(after.path("readiness").path("error").asText())
          .isEqualTo(
              "Sandbox admission enforcement cannot be disabled without restarting the Box"
                  + " Runtime");
    }

    // Neither the REST API nor /readyz pretends otherwise.
    BoxHttp http = new BoxHttp(server().port(), BoxHttp.bearer(TOKEN));
    Answer rest = http.post("/v1/sessions/s/exec", "{\"cmd\": \"echo hi\"}");
    assertThat(rest.status()).isEqualTo(503);
    assertThat(rest.errorCode()).isEqualTo("backend_unavailable");
    assertThat(rest.errorMessage()).contains("box.admission.required");
    Answer ready = http.get("/readyz");
    assertThat(ready.status()).isEqualTo(503);
    assertThat(ready.body().path("mode").asText()).isEqualTo("grant_enforced");
    assertThat(ready.body().path("checks").path("configuration").asBoolean()).isFalse();
    assertThat(ready.body().path("resources").path("sessions").asInt()).isZero();
    assertThat(server().sessions().list()).isEmpty();
  }

  @Test
  void onTheRequiredBackend_theIsolationChecksAreProvenInARealJail_andTheModeStillFailsClosed()
      throws IOException {
    OptionalPiece.assumeNsjail();
    Path hostRoot = Files.createDirectories(dir.resolve("langbot/data/box"));
    start(dir.resolve("runtime"), "nsjail");
    try (RpcClient rpc = connect()) {
      RpcClient.data(
          rpc.call(
              "box_init", "{\"admission\": {\"required\": true}, " + local(hostRoot) + "}", null));

      JsonNode readiness =
          RpcClient.data(rpc.call("box_get_backend_info", "{}", null)).path("readiness");
      JsonNode checks = readiness.path("checks");
      assertThat(checks.path("required_backend").asBoolean()).isTrue();
      assertThat(checks.path("backend_available").asBoolean()).isTrue();
      assertThat(checks.path("namespace_isolation").asBoolean()).as("%s", readiness).isTrue();
      assertThat(checks.path("mount_isolation").asBoolean()).as("%s", readiness).isTrue();
      assertThat(checks.path("network_isolation").asBoolean()).as("%s", readiness).isTrue();
      assertThat(readiness.path("backend").path("details").path("probe").asText())
          .contains("ifaces=lo");
      // This host has cgroup v1 and no hard storage quota for host_path workspaces.
      assertThat(checks.path("cgroup_v2").asBoolean()).isFalse();
      assertThat(checks.path("hard_workspace_quota").asBoolean()).isFalse();
      assertThat(readiness.path("ready").asBoolean()).isFalse();
      assertThat(
              message(
                  rpc.call(
                      "box_exec", "{\"session_id\": \"global\", \"cmd\": \"id\"}", context("ws"))))
          .startsWith("BoxReadinessError: Managed sandbox isolation is not ready (failed checks:")
          .contains("cgroup_v2")
          .doesNotContain("namespace_isolation");
      assertThat(server().sessions().list()).as("the probe's session is gone").isEmpty();
    }
  }

  @Test
  void theSharedWorkspaceProbe_digestsOneMarkerByBasename_andNothingElse()
      throws IOException, NoSuchAlgorithmException {
    Path hostRoot = Files.createDirectories(dir.resolve("langbot/data/box"));
    start(dir.resolve("runtime"));
    String name = ".langbot-box-volume-probe-" + "0123456789abcdef".repeat(2);
    byte[] content = "sixty-four random bytes stand in here".getBytes(StandardCharsets.UTF_8);
    try (RpcClient rpc = connect()) {
      assertThat(
              message(
                  rpc.call(
                      "box_verify_shared_workspace", "{\"marker_name\": \"" + name + "\"}", null)))
          .isEqualTo(
              "BoxReadinessError: Managed sandbox admission requires box.local.default_workspace");
      rpc.callData("box_init", "{" + local(hostRoot) + "}", null);
      Path workspace = hostRoot.resolve("default");
      Files.write(workspace.resolve(name), content);

      JsonNode answer =
          rpc.callData("box_verify_shared_workspace", "{\"marker_name\": \"" + name + "\"}", null);
      assertThat(answer.path("marker_name").asText()).isEqualTo(name);
      assertThat(answer.path("size").asInt()).isEqualTo(content.length);
      assertThat(answer.path("sha256").asText())
          .isEqualTo(
              HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(content)));

      for (String bad : new String[] {"../../etc/passwd", name + "0", "/etc/hostname", ""}) {
        assertThat(
                message(
                    rpc.call(
                        "box_verify_shared_workspace", "{\"marker_name\": \"" + bad + "\"}", null)))
            .as(bad)
            .isEqualTo("BoxReadinessError: Invalid Box shared Workspace probe basename");
      }
      String linked = ".langbot-box-volume-probe-" + "f".repeat(32);
      Files.createSymbolicLink(workspace.resolve(linked), Path.of("/etc/hostname"));
      assertThat(
              message(
                  rpc.call(
                      "box_verify_shared_workspace",
                      "{\"marker_name\": \"" + linked + "\"}",
                      null)))
          .isEqualTo("BoxReadinessError: Box shared Workspace probe is not a regular file");
      String big = ".langbot-box-volume-probe-" + "e".repeat(32);
      Files.write(workspace.resolve(big), new byte[1025]);
      assertThat(
              message(
                  rpc.call(
                      "box_verify_shared_workspace", "{\"marker_name\": \"" + big + "\"}", null)))
          .isEqualTo("BoxReadinessError: Box shared Workspace probe has an invalid size");
    }
  }
}
