package dev.box.langbot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The skill store on real files in a temporary skills root. */
class SkillStoreTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;

  private SkillStore store;
  private SkillStore neighbour;

  @BeforeEach
  void setUp() {
    store = new SkillStore(dir, Tenancy.namespace("instance", "ws-a"));
    neighbour = new SkillStore(dir, Tenancy.namespace("instance", "ws-b"));
  }

  private static JsonNode json(String text) throws IOException {
    return JSON.readTree(text);
  }

  private Skill create(String name, String instructions) throws IOException {
    return store.create(
        json(
            "{\"name\": \""
                + name
                + "\", \"description\": \"about "
                + name
                + "\", \"instructions\": \""
                + instructions
                + "\"}"));
  }

  @Test
  void create_writesAPackageUnderTheWorkspaceRoot_withItsPublicFields() throws IOException {
    Skill skill = create("pdf-tools", "Use pdftotext.");
    Path root = dir.toRealPath().resolve("tenants").resolve(Tenancy.namespace("instance", "ws-a"));
    assertThat(skill.packageRoot()).isEqualTo(root.resolve("pdf-tools"));
    assertThat(skill.entryFile()).isEqualTo("SKILL.md");
    assertThat(skill.displayName()).isEqualTo("pdf-tools");
    assertThat(skill.description()).isEqualTo("about pdf-tools");
    assertThat(skill.instructions()).isEqualTo("Use pdftotext.");
    assertThat(skill.pythonProject()).isFalse();
    assertThat(Files.readString(root.resolve("pdf-tools/SKILL.md")))
        .startsWith("---\nname: pdf-tools\n");
    JsonNode node = skill.toJson(JSON);
    assertThat(node.fieldNames())
        .toIterable()
        .containsExactly(
            "name",
            "display_name",
            "description",
            "instructions",
            "package_root",
            "entry_file",
            "python_project",
            "created_at",
            "updated_at");
    assertThat(node.path("updated_at").asText()).matches("\\d{4}-\\d\\d-\\d\\dT.*\\+00:00");

    assertThatThrownBy(() -> create("pdf-tools", "again"))
        .hasMessage("Skill with name \"pdf-tools\" already exists");
  }

  @Test
  void names_followTheReferenceRule() {
    assertThatThrownBy(() -> create("bad name", "x"))
        .hasMessage("Skill name can only contain letters, numbers, hyphens and underscores");
    assertThatThrownBy(() -> create("../up", "x"))
        .hasMessage("Skill name can only contain letters, numbers, hyphens and underscores");
    assertThatThrownBy(() -> create("a".repeat(65), "x"))
        .hasMessage("Skill name cannot exceed 64 characters");
    assertThatThrownBy(() -> create("  ", "x")).hasMessage("Skill name is required");
  }

  @Test
  void workspaces_doNotSeeEachOthersSkills() throws IOException {
    create("shared-name", "mine");
    neighbour.create(json("{\"name\": \"shared-name\", \"instructions\": \"theirs\"}"));
    assertThat(store.list()).singleElement().extracting(Skill::instructions).isEqualTo("mine");
    assertThat(neighbour.list())
        .singleElement()
        .extracting(Skill::instructions)
        .isEqualTo("theirs");

    Path theirs = neighbour.require("shared-name").packageRoot();
    assertThatThrownBy(() -> store.scan(theirs.toString()))
        .hasMessage("scan path must stay within the Workspace skill root");
    assertThatThrownBy(
            () -> store.create(json("{\"name\": \"x\", \"package_root\": \"" + theirs + "\"}")))
        .hasMessage("package_root must stay within the Workspace skill root");
  }

  @Test
  void symlinkedDirectories_areNotFollowedIntoAnotherWorkspace() throws IOException {
    neighbour.create(json("{\"name\": \"secret\", \"instructions\": \"theirs\"}"));
    Files.createSymbolicLink(
        store.root().resolve("link"), neighbour.require("secret").packageRoot());
    assertThat(store.list()).isEmpty();
    assertThatThrownBy(() -> store.scan(store.root().resolve("link").toString()))
        .hasMessage("scan path must stay within the Workspace skill root");
  }

  @Test
  void list_sortsNewestFirst_andSkipsCorruptPackages() throws IOException {
    create("older", "a");
    create("newer", "b");
    Path older = store.require("older").packageRoot().resolve("SKILL.md");
    Files.setLastModifiedTime(
        older, java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis() - 60_000));
    Path corrupt = Files.createDirectories(store.root().resolve("corrupt"));
    Files.write(corrupt.resolve("SKILL.md"), new byte[] {(byte) 0xff, (byte) 0xfe});
    assertThat(store.list()).extracting(Skill::name).containsExactly("newer", "older");
    assertThat(store.get("missing")).isNull();
  }

  @Test
  void update_changesMetadata_butNotNameOrPackage() throws IOException {
    create("doc", "old");
    Skill updated =
        store.update("doc", json("{\"display_name\": \"Docs\", \"instructions\": \"new\"}"));
    assertThat(updated.displayName()).isEqualTo("Docs");
    assertThat(updated.instructions()).isEqualTo("new");
    assertThat(updated.description()).isEqualTo("about doc");
    assertThatThrownBy(() -> store.update("doc", json("{\"name\": \"other\"}")))
        .hasMessage("Renaming skills is not supported");
    assertThatThrownBy(() -> store.update("doc", json("{\"package_root\": \"/tmp\"}")))
        .hasMessageStartingWith("Updating package_root is not supported");
    assertThatThrownBy(() -> store.update("nope", json("{}")))
        .hasMessage("Skill \"nope\" not found");
  }

  @Test
  void createInPlace_adoptsAPackageOfTheWorkspace_andDeleteRemovesIt() throws IOException {
    Path pkg = Files.createDirectories(store.root().resolve("imported/inner"));
    Files.writeString(pkg.resolve("skill.md"), "---\ndescription: from file\n---\nbody\n");
    Files.writeString(pkg.resolve("requirements.txt"), "requests\n");
    Skill skill = store.create(json("{\"name\": \"adopted\", \"package_root\": \"" + pkg + "\"}"));
    assertThat(skill.packageRoot()).isEqualTo(pkg.toRealPath());
    assertThat(skill.entryFile()).isEqualTo("skill.md");
    assertThat(skill.description()).isEqualTo("from file");
    assertThat(skill.instructions()).isEqualTo("body\n");
    assertThat(skill.pythonProject()).isTrue();

    store.delete("adopted");
    assertThat(store.root().resolve("imported")).doesNotExist();
    assertThatThrownBy(() -> store.delete("adopted")).hasMessage("Skill \"adopted\" not found");
  }

  @Test
  void scan_findsOnePackageWithinTwoLevels() throws IOException {
    create("one", "x");
    assertThat(store.scan(store.root().resolve("one").toString()).name()).isEqualTo("one");
    create("two", "y");
    assertThatThrownBy(() -> store.scan(store.root().toString()))
        .hasMessageStartingWith("Multiple skill directories found in");
    Path empty = Files.createDirectories(store.root().resolve("empty"));
    assertThatThrownBy(() -> store.scan(empty.toString()))
        .hasMessageStartingWith("No SKILL.md found in");
    assertThatThrownBy(() -> store.scan(store.root().resolve("absent").toString()))
        .hasMessageStartingWith("Directory does not exist");
  }

  @Test
  void files_areReadWrittenAndListed_insideThePackage() throws IOException {
    Skill skill = create("files", "x");
    assertThat(SkillFiles.write(skill, "scripts/run.sh", "echo héllo\n").bytes()).isEqualTo(12);
    SkillFiles.write(skill, ".hidden", "h");
    assertThat(SkillFiles.read(skill, "./scripts/../scripts/run.sh"))
        .isEqualTo(new SkillFiles.Text("scripts/run.sh", "echo héllo\n"));

    SkillFiles.Listing root = SkillFiles.list(skill, ".", false, 200);
    assertThat(root.basePath()).isEqualTo(".");
    assertThat(root.entries())
        .containsExactly(
            new SkillFiles.FileEntry("SKILL.md", "SKILL.md", false, root.entries().get(0).size()),
            new SkillFiles.FileEntry("scripts", "scripts", true, null));
    assertThat(SkillFiles.list(skill, ".", true, 1).truncated()).isTrue();
    assertThat(SkillFiles.list(skill, "scripts", false, 5).entries())
        .extracting(SkillFiles.FileEntry::path)
        .containsExactly("scripts/run.sh");
    assertThatThrownBy(() -> SkillFiles.list(skill, ".", false, 0))
        .hasMessage("max_entries must be a positive integer");
    assertThatThrownBy(() -> SkillFiles.list(skill, "nowhere", false, 5))
        .hasMessage("Skill directory not found: nowhere");
    assertThatThrownBy(() -> SkillFiles.read(skill, "missing.txt"))
        .hasMessage("Skill file not found: missing.txt");
  }

  @Test
  void files_refuseEscapes_byDotDot_absolutePaths_andSymlinks() throws IOException {
    Skill skill = create("guarded", "x");
    Path outside = Files.writeString(dir.resolve("outside.txt"), "secret");
    for (String bad : new String[] {"../x", "a/../../x", ".."}) {
      assertThatThrownBy(() -> SkillFiles.read(skill, bad))
          .hasMessage("path must stay within the skill package root");
      assertThatThrownBy(() -> SkillFiles.write(skill, bad, "x"))
          .hasMessage("path must stay within the skill package root");
    }
    assertThatThrownBy(() -> SkillFiles.read(skill, outside.toString()))
        .hasMessage("path must be relative to the skill package root");
    Files.createSymbolicLink(skill.packageRoot().resolve("leak"), outside);
    Files.createSymbolicLink(skill.packageRoot().resolve("up"), dir);
    assertThatThrownBy(() -> SkillFiles.read(skill, "leak"))
        .hasMessage("path must stay within the skill package root");
    assertThatThrownBy(() -> SkillFiles.write(skill, "up/planted.txt", "x"))
        .hasMessage("path must stay within the skill package root");
    assertThat(dir.resolve("planted.txt")).doesNotExist();
    assertThat(Files.readString(outside)).isEqualTo("secret");
  }

  @Test
  void files_areUtf8Text_ofAtMostOneMebibyte() throws IOException {
    Skill skill = create("texts", "x");
    Files.write(skill.packageRoot().resolve("bin"), new byte[] {(byte) 0xc3, (byte) 0x28});
    assertThatThrownBy(() -> SkillFiles.read(skill, "bin"))
        .hasMessage("Skill file bin is not valid UTF-8 text");
    Files.write(skill.packageRoot().resolve("big"), new byte[SkillPackages.MAX_TEXT_BYTES + 1]);
    assertThatThrownBy(() -> SkillFiles.read(skill, "big"))
        .hasMessage("Skill file big exceeds the 1048576-byte limit");
    String tooBig = "é".repeat(SkillPackages.MAX_TEXT_BYTES / 2 + 1);
    assertThatThrownBy(() -> SkillFiles.write(skill, "w.txt", tooBig))
        .hasMessage("Skill file w.txt exceeds the 1048576-byte limit");
    assertThat(skill.packageRoot().resolve("w.txt")).doesNotExist();
    assertThat("é".getBytes(StandardCharsets.UTF_8)).hasSize(2);
  }
}
