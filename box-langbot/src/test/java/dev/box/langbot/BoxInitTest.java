package dev.box.langbot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.box.api.BoxProfile;
import dev.box.api.BoxValidationException;
import dev.box.core.RuntimeConfig;
import dev.box.core.backend.BackendChoice;
import dev.box.core.backend.Foreground;
import dev.box.core.backend.NoBackend;
import dev.box.core.exec.ExecRunner;
import dev.box.core.session.SessionListener;
import dev.box.core.session.SessionManager;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BoxInitTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;

  private Path cwd;
  private Path other;
  private final ExecutorService pumps = ExecRunner.newPumpPool();
  private SessionManager sessions;
  private BoxInit init;

  @BeforeEach
  void setUp() throws IOException {
    cwd = Files.createDirectories(dir.resolve("cwd"));
    other = Files.createDirectories(dir.resolve("other"));
    sessions =
        new SessionManager(
            new BackendChoice(
                new NoBackend("no sandbox is started here"), "none", "test", Map.of()),
            RuntimeConfig.defaults(dir.resolve("data")),
            Clock.systemUTC(),
            System::nanoTime,
            pumps,
            "t",
            SessionListener.NONE,
            new Foreground());
    init =
        new BoxInit(
            new ActionServices(
                sessions,
                new Tenancy(sessions, Tenancy.DEFAULT_MAX_RECORDS),
                new Admission(Clock.systemUTC(), (policy, error) -> JSON.createObjectNode(), JSON),
                JSON),
            cwd);
  }

  @AfterEach
  void tearDown() {
    sessions.close();
    pumps.shutdownNow();
  }

  private static JsonNode json(String text) throws IOException {
    return JSON.readTree(text);
  }

  @Test
  void local_resolvesAsTheReference_andCreatesTheDefaultWorkspace() throws IOException {
    init.apply(json("{\"local\": {\"host_root\": \"./data/box\"}}"));

    BoxInit.Local local = init.local();
    assertThat(local.hostRoot()).isEqualTo(cwd.resolve("data/box"));
    assertThat(local.defaultWorkspace()).isEqualTo(cwd.resolve("data/box/default"));
    assertThat(local.allowedRoots()).containsExactly(cwd.resolve("data/box"));
    assertThat(cwd.resolve("data/box/default")).isDirectory();
    assertThat(sessions.hostPathPolicy().allowedRoots())
        .containsExactly(cwd.resolve("data/box").toRealPath());

    init.apply(
        json(
            "{\"local\": {\"host_root\": \"root\", \"default_workspace\": \"ws\","
                + " \"allowed_mount_roots\": \"root, "
                + other
                + "\"}}"));
    local = init.local();
    assertThat(local.defaultWorkspace()).isEqualTo(cwd.resolve("root/ws"));
    assertThat(local.allowedRoots()).containsExactly(cwd.resolve("root"), other);
    assertThat(cwd.resolve("root/ws")).isDirectory();
  }

  @Test
  void defaultWorkspace_isCreatedOnlyUnderAnAllowedRoot() throws IOException {
    Files.writeString(other.resolve("file"), "x");
    assertThatThrownBy(
            () -> init.apply(json("{\"local\": {\"default_workspace\": \"" + dir + "/ws\"}}")))
        .isInstanceOf(BoxValidationException.class)
        .hasMessage(
            "box.local.default_workspace cannot be created because no allowed_mount_roots are"
                + " configured");
    assertThatThrownBy(
            () ->
                init.apply(
                    json(
                        "{\"local\": {\"host_root\": \"root\", \"allowed_mount_roots\": [\""
                            + other
                            + "\"]}}")))
        .isInstanceOf(BoxValidationException.class)
        .hasMessage("box.local.default_workspace is outside allowed_mount_roots: " + other);
    assertThatThrownBy(
            () ->
                init.apply(
                    json(
                        "{\"local\": {\"host_root\": \""
                            + other
                            + "\", \"default_workspace\": \"file\"}}")))
        .isInstanceOf(BoxValidationException.class)
        .hasMessage(
            "box.local.default_workspace must point to a directory on the Box runtime host");
    assertThat(cwd.resolve("root")).doesNotExist();
  }

  @Test
  void keysTheRuntimeDoesNotApply_areReportedWithTheReason_neverSilentlyDropped()
      throws IOException {
    Map<String, String> notApplied =
        init.apply(
            json(
                "{\"enabled\": true, \"default_memory_mb\": 1536, \"runtime\": {},"
                    + " \"e2b\": {\"api_key\": \"\"}, \"typo\": 1,"
                    + " \"limits\": {\"max_sessions\": 3, \"max_workspace_entries\": 9,"
                    + " \"max_sesions\": 1},"
                    + " \"local\": {\"workspace_quota_mb\": 64, \"profile\": \"default\","
                    + " \"hots_root\": \"x\"}}"));

    assertThat(notApplied)
        .containsOnlyKeys(
            "enabled",
            "default_memory_mb",
            "e2b",
            "typo",
            "limits.max_workspace_entries",
            "limits.max_sesions",
            "local.workspace_quota_mb",
            "local.hots_root");
    assertThat(notApplied.get("typo")).isEqualTo("unknown key");
    assertThat(notApplied.get("local.workspace_quota_mb")).contains("not enforced");
    assertThat(init.limits().maxSessions()).isEqualTo(3);
    assertThat(
            init.apply(
                json(
                    "{\"limits\": {\"max_sessions\": 4}, \"local\": {\"workspace_quota_mb\":"
                        + " null}}")))
        .isEmpty();
  }

  @Test
  void limits_areJsonIntegersInRange_andAKeyLeftOutTakesTheDefault() throws IOException {
    init.apply(
        json(
            "{\"limits\": {\"max_sessions\": 7, \"max_rpc_file_bytes\": null,"
                + " \"max_admission_records\": 250000, \"completed_process_retention_sec\": 0}}"));

    assertThat(init.limits())
        .isEqualTo(new BoxInit.Limits(7, 64, 256, 250_000, 20 * 1024 * 1024, 0));
    for (String notAnInteger : List.of("\"7\"", "true", "7.0", "7.5", "2147483648", "[7]")) {
      assertThatThrownBy(
              () -> init.apply(json("{\"limits\": {\"max_sessions\": " + notAnInteger + "}}")))
          .as(notAnInteger)
          .isInstanceOf(BoxValidationException.class)
          .hasMessage("box.limits.max_sessions must be an integer");
    }
    assertThatThrownBy(() -> init.apply(json("{\"limits\": {\"max_admission_records\": 0}}")))
        .isInstanceOf(BoxValidationException.class)
        .hasMessage("box.limits.max_admission_records must be between 1 and 250000");
    assertThatThrownBy(() -> init.apply(json("{\"limits\": {\"max_rpc_file_bytes\": 104857601}}")))
        .hasMessage("box.limits.max_rpc_file_bytes must be between 1 and 104857600");
    assertThat(init.limits().maxSessions()).isEqualTo(7);
  }

  @Test
  void invalidConfig_changesNothing() throws IOException {
    init.apply(
        json(
            "{\"limits\": {\"max_sessions\": 3}, \"local\": {\"host_root\": \""
                + other
                + "\", \"profile\": \"network_basic\", \"image\": \"img:1\"}}"));
    BoxInit.Local before = init.local();

    assertThatThrownBy(
            () ->
                init.apply(
                    json(
                        "{\"limits\": {\"max_sessions\": 7}, \"local\": {\"host_root\": \"x\","
                            + " \"profile\": \"nope\"}}")))
        .isInstanceOf(BoxValidationException.class)
        .hasMessage(
            "unknown box profile 'nope', available profiles: default, network_basic,"
                + " network_extended, offline_readonly");
    assertThatThrownBy(
            () ->
                init.apply(
                    json(
                        "{\"limits\": {\"max_sessions\": -1}, \"local\": {\"host_root\":"
                            + " \"y\"}}")))
        .isInstanceOf(BoxValidationException.class)
        .hasMessage("box.limits.max_sessions must be between 0 and 5000");
    assertThatThrownBy(() -> init.apply(json("{\"local\": {\"allowed_mount_roots\": 5}}")))
        .isInstanceOf(BoxValidationException.class);

    assertThat(init.limits().maxSessions()).isEqualTo(3);
    assertThat(sessions.config().maxSessions()).isEqualTo(3);
    assertThat(init.local()).isEqualTo(before);
    assertThat(init.local().profile()).isEqualTo(BoxProfile.named("network_basic"));
    assertThat(init.local().image()).isEqualTo("img:1");
    assertThat(sessions.hostPathPolicy().allowedRoots()).containsExactly(other.toRealPath());
    assertThat(cwd.resolve("x")).doesNotExist();
    assertThat(cwd.resolve("y")).doesNotExist();
  }

  @Test
  void aLocalSectionWithoutRoots_keepsTheRuntimesOwnAllowList_andEmptyRootsRefuseAll()
      throws IOException {
    init.apply(json("{\"local\": {\"profile\": \"default\"}}"));

    assertThat(sessions.hostPathPolicy().allowedRoots()).isEmpty();
    assertThat(sessions.hostPathPolicy().check(other.toString(), false))
        .isEqualTo(other.toRealPath());

    init.apply(json("{\"local\": {\"allowed_mount_roots\": \" , \"}}"));
    assertThatThrownBy(() -> sessions.hostPathPolicy().check(other.toString(), false))
        .isInstanceOf(BoxValidationException.class)
        .hasMessage("host_path mounting is disabled because no allowed_mount_roots are configured");
  }
}
