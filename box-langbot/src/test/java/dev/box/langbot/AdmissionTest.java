package dev.box.langbot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.box.api.BoxHostMountMode;
import dev.box.api.BoxMountSpec;
import dev.box.api.BoxNetworkMode;
import dev.box.api.BoxSpec;
import dev.box.testclient.ManualClock;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Grant-enforced mode's rules: the policy section, grants with revisions, generations, tombstones
 * and expiry, readiness failing closed, and the one admitted session shape. Readiness is the
 * caller's here, because on a host without the required backend the real one never holds (the
 * server tests check that).
 */
class AdmissionTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String INSTANCE = "instance-1";
  private static final Predicate<String> TRUSTED = INSTANCE::equals;

  private final ManualClock clock = new ManualClock(Instant.parse("2026-11-26T10:00:00Z"));
  private boolean ready = true;
  private int readinessChecks;

  private final Admission admission =
      new Admission(
          clock,
          (policy, error) -> {
            readinessChecks++;
            ObjectNode report = JSON.createObjectNode().put("ready", ready && error == null);
            report.putObject("checks").put("configuration", error == null).put("cgroup_v2", ready);
            return report;
          },
          JSON);

  private static JsonNode json(String text) throws IOException {
    return JSON.readTree(text);
  }

  private String grant(String workspace, long generation, long revision, Duration ttl, int sessions)
      throws IOException {
    return "{\"instance_uuid\": \""
        + INSTANCE
        + "\", \"workspace_uuid\": \""
        + workspace
        + "\", \"execution_generation\": "
        + generation
        + ", \"entitlement_revision\": "
        + revision
        + ", \"expires_at\": \""
        + clock.instant().plus(ttl).atOffset(ZoneOffset.ofHours(2))
        + "\", \"max_sessions\": "
        + sessions
        + ", \"max_managed_processes\": 0}";
  }

  private ObjectNode upsert(String grant, List<ActionContext> drop) throws IOException {
    return admission.upsert(json(grant), TRUSTED, drop);
  }

  private static ActionContext context(String workspace, long generation) {
    return new ActionContext(INSTANCE, workspace, generation, null);
  }

  @Test
  void off_byDefault_andNothingIsAsked() {
    admission.configure(null);

    assertThat(admission.required()).isFalse();
    admission.requireReady();
    assertThat(readinessChecks).isZero();
  }

  @Test
  void aMalformedSection_turnsEnforcementOn_andReadinessFailsOnConfiguration() throws IOException {
    admission.configure(json("{\"required\": false, \"max_managed_processes\": 3}"));

    assertThat(admission.required()).isTrue();
    assertThatThrownBy(admission::requireReady)
        .isInstanceOf(ActionError.class)
        .hasMessage("Managed sandbox isolation is not ready (failed checks: configuration)")
        .extracting(e -> ((ActionError) e).className())
        .isEqualTo("BoxReadinessError");
  }

  @Test
  void enforcement_cannotBeTurnedOffWithoutARestart() throws IOException {
    admission.configure(json("{\"required\": true}"));
    admission.configure(json("{\"required\": false}"));

    assertThat(admission.required()).isTrue();
    assertThatThrownBy(
            () -> upsert(grant("ws", 1, 1, Duration.ofSeconds(60), 1), new ArrayList<>()))
        .hasMessage(
            "Invalid sandbox admission configuration: Sandbox admission enforcement cannot be"
                + " disabled without restarting the Box Runtime");
  }

  @Test
  void policyFields_haveTheReferencesConstraints() throws IOException {
    assertThat(AdmissionPolicy.read(json("{}"))).isEqualTo(AdmissionPolicy.DEFAULT);
    for (String[] bad :
        new String[][] {
          {
            "{\"max_sessions\": 2}",
            "box.admission.max_sessions: max_sessions must be between 0 and 1"
          },
          {
            "{\"max_managed_processes\": 1}",
            "box.admission.max_managed_processes: max_managed_processes must be 0"
          },
          {"{\"memory_mb\": 16}", "box.admission.memory_mb: memory_mb must be at least 32"},
          {"{\"cpus\": 0}", "box.admission.cpus: cpus must be greater than 0"},
          {"{\"cpus\": true}", "box.admission.cpus: cpus must be a number"},
          {"{\"pids_limit\": true}", "box.admission.pids_limit: must be an integer"},
          {"{\"max_timeout_sec\": 0}", "box.admission.max_timeout_sec: must be greater than 0"},
          {
            "{\"required_backend\": \"docker\"}",
            "box.admission.required_backend: input should be 'nsjail'"
          },
          {
            "{\"logical_session_id\": \"mine\"}",
            "box.admission.logical_session_id: input should be 'global'"
          },
          {"{\"plan\": \"pro\"}", "box.admission.plan: extra inputs are not permitted"},
          {"{\"required\": \"yes\"}", "box.admission.required: must be a boolean"}
        }) {
      assertThatThrownBy(() -> AdmissionPolicy.read(json(bad[0]))).as(bad[0]).hasMessage(bad[1]);
    }
  }

  @Test
  void aGrant_admitsItsWorkspaceAndGeneration_untilItExpires() throws IOException {
    admission.configure(json("{\"required\": true}"));
    List<ActionContext> drop = new ArrayList<>();

    ObjectNode installed = upsert(grant("ws", 2, 1, Duration.ofSeconds(60), 1), drop);

    assertThat(installed.path("installed").asBoolean()).isTrue();
    assertThat(installed.path("expires_at").asText()).isEqualTo("2026-11-26T10:01:00+00:00");
    assertThat(drop).containsExactly(context("ws", 2));
    assertThat(admission.require(context("ws", 2)).maxSessions()).isEqualTo(1);
    assertThatThrownBy(() -> admission.require(context("ws", 1)))
        .hasMessage("Sandbox admission grant belongs to another execution generation");
    assertThatThrownBy(() -> admission.require(context("other", 2)))
        .hasMessage("Sandbox admission grant is missing");

    clock.advance(Duration.ofSeconds(60));
    assertThatThrownBy(() -> admission.require(context("ws", 2)))
        .hasMessage("Sandbox admission grant has expired");
    assertThat(admission.reapExpired()).containsExactly(context("ws", 2));
    assertThatThrownBy(() -> admission.require(context("ws", 2)))
        .hasMessage("Sandbox admission grant is missing");
  }

  @Test
  void grants_areBoundedByThePolicy_andTheirRevisionsOnlyMoveForward() throws IOException {
    admission.configure(json("{\"required\": true, \"max_grant_ttl_sec\": 300}"));
    List<ActionContext> drop = new ArrayList<>();

    assertThatThrownBy(() -> upsert(grant("ws", 1, 1, Duration.ofSeconds(301), 1), drop))
        .hasMessage("Sandbox admission grant lifetime exceeds the configured maximum");
    assertThatThrownBy(() -> upsert(grant("ws", 1, 1, Duration.ZERO, 1), drop))
        .hasMessage("Cannot install an expired sandbox admission grant");
    assertThatThrownBy(() -> upsert(grant("ws", 1, 1, Duration.ofSeconds(60), 2), drop))
        .hasMessage("Sandbox admission grant exceeds the session cap");
    assertThatThrownBy(
            () ->
                admission.upsert(
                    json(grant("ws", 1, 1, Duration.ofSeconds(60), 1)), i -> false, drop))
        .hasMessage("Sandbox admission grant does not match the trusted instance")
        .extracting(e -> ((ActionError) e).className())
        .isEqualTo("PermissionError");

    upsert(grant("ws", 3, 5, Duration.ofSeconds(60), 1), drop);
    assertThatThrownBy(() -> upsert(grant("ws", 3, 4, Duration.ofSeconds(60), 1), drop))
        .hasMessage("Sandbox admission grant revision is stale");
    assertThatThrownBy(() -> upsert(grant("ws", 2, 5, Duration.ofSeconds(60), 1), drop))
        .hasMessage("Sandbox admission execution generation is stale");
    assertThatThrownBy(() -> upsert(grant("ws", 3, 5, Duration.ofSeconds(60), 0), drop))
        .hasMessage("Sandbox admission limits changed without a new entitlement revision");

    // A shorter renewal of the same entitlement is idempotent: the longer one stays.
    ObjectNode renewed = upsert(grant("ws", 3, 5, Duration.ofSeconds(30), 1), drop);
    assertThat(renewed.path("expires_at").asText()).isEqualTo("2026-11-26T10:01:00+00:00");
  }

  @Test
  void aRevocation_leavesATombstone_thatRefusesOlderAndEqualRevisions() throws IOException {
    admission.configure(json("{\"required\": true}"));
    List<ActionContext> drop = new ArrayList<>();
    upsert(grant("ws", 1, 2, Duration.ofSeconds(60), 1), drop);
    drop.clear();

    ObjectNode revoked =
        admission.revoke(
            json(
                "{\"instance_uuid\": \"instance-1\", \"workspace_uuid\": \"ws\","
                    + " \"entitlement_revision\": 3}"),
            TRUSTED,
            drop);

    assertThat(revoked.toString())
        .isEqualTo("{\"revoked\":true,\"workspace_uuid\":\"ws\",\"entitlement_revision\":3}");
    assertThat(drop).containsExactly(context("ws", 1));
    assertThatThrownBy(() -> admission.require(context("ws", 1)))
        .hasMessage("Sandbox admission grant is missing");
    assertThatThrownBy(() -> upsert(grant("ws", 1, 3, Duration.ofSeconds(60), 1), drop))
        .hasMessage("Sandbox admission grant revision was revoked");
    assertThatThrownBy(
            () ->
                admission.revoke(
                    json(
                        "{\"instance_uuid\": \"instance-1\", \"workspace_uuid\": \"ws\","
                            + " \"entitlement_revision\": 2}"),
                    TRUSTED,
                    drop))
        .hasMessage("Sandbox admission revocation is stale");
    assertThat(
            upsert(grant("ws", 1, 4, Duration.ofSeconds(60), 1), drop)
                .path("installed")
                .asBoolean())
        .isTrue();
  }

  @Test
  void malformedGrants_areValidationErrors() throws IOException {
    admission.configure(json("{\"required\": true}"));
    List<ActionContext> drop = new ArrayList<>();
    String valid = grant("ws", 1, 1, Duration.ofSeconds(60), 1);

    for (String[] bad :
        new String[][] {
          {
            valid.replace("\"max_sessions\": 1", "\"max_sessions\": true"),
            "max_sessions: must be an integer"
          },
          {
            valid.replace("\"execution_generation\": 1", "\"execution_generation\": 0"),
            "execution_generation: must be greater than or equal to 1"
          },
          {valid.replace("+02:00", ""), "expires_at: expires_at must include a timezone"},
          {valid.replace("{", "{\"plan\": \"pro\", "), "plan: extra inputs are not permitted"},
          {
            valid.replace("\"workspace_uuid\": \"ws\"", "\"workspace_uuid\": \"  \""),
            "workspace_uuid: must not be empty"
          }
        }) {
      assertThatThrownBy(() -> upsert(bad[0], drop))
          .as(bad[0])
          .hasMessage(bad[1])
          .extracting(e -> ((ActionError) e).className())
          .isEqualTo("BoxValidationError");
    }
  }

  @Test
  void readiness_isCachedForTheConfiguredTime_andFailsClosed() throws IOException {
    admission.configure(json("{\"required\": true, \"readiness_cache_sec\": 15}"));
    ready = false;

    assertThatThrownBy(admission::requireReady)
        .hasMessage("Managed sandbox isolation is not ready (failed checks: cgroup_v2)");
    ready = true;
    assertThatThrownBy(admission::requireReady).as("still cached").isInstanceOf(ActionError.class);
    clock.advance(Duration.ofSeconds(16));
    admission.requireReady();
    assertThat(readinessChecks).isEqualTo(2);
  }

  @Test
  void theAdmittedShape_isForced_andARequestForAnotherIsRefused(@TempDir Path root)
      throws IOException {
    AdmissionPolicy policy = AdmissionPolicy.DEFAULT.enforced();
    ActionContext ctx = context("ws", 4);
    BoxSpec base = BoxSpec.builder("chat").cmd("ls").timeoutSec(600).persistent(false).build();

    BoxSpec admitted = AdmittedSpec.normalize(base, ctx, policy, root, name -> null);

    Path workspace = root.resolve("tenants").resolve(Tenancy.namespace(INSTANCE, "ws"));
    assertThat(workspace).isDirectory();
    assertThat(admitted.sessionId()).isEqualTo(Tenancy.physicalId(ctx, "global"));
    assertThat(admitted.hostPath()).isEqualTo(workspace.toString());
    assertThat(admitted.hostPathMode()).isEqualTo(BoxHostMountMode.RW);
    assertThat(admitted.persistent()).isTrue();
    assertThat(admitted.timeoutSec()).isEqualTo(120);
    assertThat(admitted.memoryMb()).isEqualTo(512);
    assertThat(admitted.pidsLimit()).isEqualTo(128);
    assertThat(admitted.readOnlyRootfs()).isTrue();
    assertThat(admitted.image()).isEqualTo(BoxSpec.DEFAULT_IMAGE);
    assertThat(admitted.cmd()).isEqualTo("ls");

    assertThatThrownBy(
            () ->
                AdmittedSpec.normalize(
                    base.toBuilder().network(BoxNetworkMode.ON).build(),
                    ctx,
                    policy,
                    root,
                    name -> null))
        .hasMessage("Managed sandbox network access is disabled");
    assertThatThrownBy(
            () ->
                AdmittedSpec.normalize(
                    base.toBuilder()
                        .extraMounts(List.of(new BoxMountSpec("/tmp", "/x", BoxHostMountMode.RO)))
                        .build(),
                    ctx,
                    policy,
                    root,
                    name -> null))
        .hasMessage("Managed sandbox additional host mounts are disabled");
    assertThatThrownBy(
            () ->
                AdmittedSpec.normalize(
                    base.toBuilder().workdir("/etc").build(), ctx, policy, root, name -> null))
        .hasMessage("Managed sandbox workdir must stay under /workspace");
    assertThatThrownBy(
            () ->
                AdmittedSpec.normalize(
                    base.toBuilder().hostPath(root.toString()).build(),
                    ctx,
                    policy,
                    root,
                    name -> null))
        .hasMessage("Managed sandbox host_path is runtime-owned");
    assertThat(
            AdmittedSpec.normalize(
                    base.toBuilder().hostPath(workspace.toString()).build(),
                    ctx,
                    policy,
                    root,
                    name -> null)
                .hostPath())
        .isEqualTo(workspace.toString());
  }

  @Test
  void anAdmittedSkill_isMountedReadOnly_fromTheWorkspacesOwnStore(@TempDir Path root) {
    ActionContext ctx = context("ws", 1);
    BoxSpec withSkill = BoxSpec.builder("s").cmd("ls").skillName("pdf").build();
    Path pdf = root.resolve("skills/pdf");

    BoxSpec admitted =
        AdmittedSpec.normalize(
            withSkill,
            ctx,
            AdmissionPolicy.DEFAULT.enforced(),
            root,
            name -> name.equals("pdf") ? pdf : null);

    assertThat(admitted.extraMounts())
        .containsExactly(
            new BoxMountSpec(pdf.toString(), "/workspace/.skills/pdf", BoxHostMountMode.RO));
    assertThatThrownBy(
            () ->
                AdmittedSpec.normalize(
                    withSkill.toBuilder().skillName("other").build(),
                    ctx,
                    AdmissionPolicy.DEFAULT.enforced(),
                    root,
                    name -> name.equals("pdf") ? pdf : null))
        .hasMessage("Managed sandbox skill is unavailable in this Workspace");
  }

  @Test
  void aTenantsDirectoryThatIsALink_outOfTheRoot_isRefused(@TempDir Path dir) throws IOException {
    Path root = Files.createDirectories(dir.resolve("root"));
    Path elsewhere = Files.createDirectories(dir.resolve("elsewhere"));
    Files.createSymbolicLink(root.resolve("tenants"), elsewhere);

    assertThatThrownBy(
            () ->
                AdmittedSpec.normalize(
                    BoxSpec.builder("s").cmd("ls").build(),
                    context("ws", 1),
                    AdmissionPolicy.DEFAULT.enforced(),
                    root,
                    name -> null))
        .hasMessage("Managed sandbox tenant directory escapes the configured workspace");
    assertThat(elsewhere).isEmptyDirectory();
  }
}
