package dev.box.langbot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The skill actions' request handling, and the mounts they confine, on a real skills root. */
class SkillActionsTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final ActionContext MINE = context("ws-mine");
  private static final ActionContext THEIRS = context("ws-theirs");

  @TempDir Path dir;

  private SkillActions actions;
  private RpcFiles files;

  private static ActionContext context(String workspace) {
    try {
      return ActionContext.fromJson(
          JSON.readTree("{\"instance_uuid\": \"i\", \"workspace_uuid\": \"" + workspace + "\"}"));
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  @BeforeEach
  void setUp() {
    files = new RpcFiles(dir.resolve("rpc-files"), () -> 20 * 1024 * 1024);
    actions = new SkillActions(() -> dir.resolve("skills"), real -> {}, files, JSON);
  }

  private JsonNode call(String action, String data, ActionContext context) throws IOException {
    return actions.handle(action, JSON.readTree(data), context);
  }

  private ObjectNode spec(String hostPath, String mode) throws IOException {
    return (ObjectNode)
        JSON.readTree(
            "{\"session_id\": \"s\", \"cmd\": \"true\", \"extra_mounts\": [{\"host_path\": \""
                + hostPath
                + "\", \"mount_path\": \"/workspace/.skills/x\", \"mode\": \""
                + mode
                + "\"}]}");
  }

  @Test
  void mountsOfTheWorkspacesSkills_becomeReadOnly_othersAreLeftAlone() throws IOException {
    String root =
        call("box_create_skill", "{\"skill\": {\"name\": \"x\"}}", MINE)
            .path("skill")
            .path("package_root")
            .asText();
    ObjectNode skill = spec(root, "rw");
    actions.confineMounts(skill, MINE);
    assertThat(skill.at("/extra_mounts/0/mode").asText()).isEqualTo("ro");

    ObjectNode none = spec(root, "none");
    actions.confineMounts(none, MINE);
    assertThat(none.at("/extra_mounts/0/mode").asText()).isEqualTo("none");

    Path elsewhere = Files.createDirectories(dir.resolve("elsewhere"));
    ObjectNode plain = spec(elsewhere.toString(), "rw");
    actions.confineMounts(plain, MINE);
    assertThat(plain.at("/extra_mounts/0/mode").asText()).isEqualTo("rw");

    Path link = Files.createSymbolicLink(dir.resolve("link"), Path.of(root));
    ObjectNode viaLink = spec(link.toString(), "rw");
    actions.confineMounts(viaLink, MINE);
    assertThat(viaLink.at("/extra_mounts/0/mode").asText()).isEqualTo("ro");

    assertThatThrownBy(() -> actions.confineMounts(spec(root, "ro"), THEIRS))
        .isInstanceOf(ActionError.class)
        .hasMessage("host_path " + root + " belongs to another Workspace's skills");
  }

  @Test
  void failures_answerBoxValidationError_butAMissingNameOfGetSkillIsAKeyError() {
    assertThatThrownBy(() -> call("box_get_skill", "{}", MINE))
        .isInstanceOfSatisfying(
            ActionError.class, e -> assertThat(e.className()).isEqualTo("KeyError"))
        .hasMessage("'name'");
    assertThatThrownBy(() -> call("box_read_skill_file", "{\"name\": \"x\"}", MINE))
        .isInstanceOfSatisfying(
            ActionError.class, e -> assertThat(e.className()).isEqualTo("BoxValidationError"))
        .hasMessage("'path'");
    assertThatThrownBy(() -> call("box_delete_skill", "{\"name\": \"ghost\"}", MINE))
        .isInstanceOfSatisfying(
            ActionError.class, e -> assertThat(e.className()).isEqualTo("BoxValidationError"))
        .hasMessage("Skill \"ghost\" not found");
    assertThatThrownBy(
            () ->
                call("box_list_skill_files", "{\"name\": \"x\", \"max_entries\": \"many\"}", MINE))
        .hasMessage("Skill \"x\" not found");
  }

  @Test
  void theFirstUpload_sweepsWhatAStoppedRuntimeLeftInStaging_andDeletesTheUpload()
      throws IOException {
    Path leftover =
        Files.createDirectories(dir.resolve("skills/.staging/upload-123/extracted/half"));
    Path upload = files.fileOf("k.zip");
    Files.createDirectories(upload.getParent());
    Files.write(upload, new TestZip().file("demo/SKILL.md", "---\nname: demo\n---\nx").bytes());

    JsonNode preview = call("box_preview_skill_zip", "{\"file_key\": \"k.zip\"}", MINE);
    assertThat(preview.at("/skills/0/name").asText()).isEqualTo("demo");
    assertThat(preview.at("/skills/0/package_root").asText()).endsWith("/skill-upload");
    assertThat(leftover).doesNotExist();
    assertThat(upload).doesNotExist();
    assertThat(dir.resolve("skills/.staging")).isEmptyDirectory();
  }
}
