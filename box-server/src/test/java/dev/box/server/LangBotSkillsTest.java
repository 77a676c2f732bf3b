package dev.box.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.box.langbot.Tenancy;
import dev.box.testclient.ZipBytes;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.util.Arrays;
import java.util.Base64;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * LangBot's skill actions end to end over {@code /rpc/ws}, as LangBot's Python client sends them: a
 * ZIP uploaded in {@code __file_chunk}s, previewed and installed, its files read and written, and
 * the package mounted into a real bubblewrap sandbox, where it can be read but not changed.
 */
class LangBotSkillsTest {
  private static final String SKILL =
      "---\nname: weather\ndescription: Look up the weather\n---\nRun ./forecast.sh <city>.\n";

  private static BoxServer server;
  private static Path hostRoot;
  private static RpcClient rpc;

  @BeforeAll
  static void start() throws IOException {
    hostRoot = Files.createTempDirectory("box-skills-host-").toRealPath();
    // The sandbox user must reach the packages below it.
    Files.setPosixFilePermissions(hostRoot, PosixFilePermissions.fromString("rwxr-xr-x"));
    server =
        BoxServer.start(
            ServerConfig.resolve(
                Map.of(
                    "port",
                    "0",
                    "data_dir",
                    Files.createTempDirectory("box-skills-data-").toString(),
                    "backend",
                    "bwrap"),
                Map.of()),
            Clock.systemUTC(),
            Map.of(
                "LANGBOT_BOX_CONTROL_TOKEN",
                LangBotServers.TOKEN,
                "LANGBOT_BOX_TRUSTED_INSTANCE_UUID",
                LangBotServers.INSTANCE),
            false);
    rpc = RpcClient.asLangBot(server.port());
    initLocal(rpc);
  }

  /** LangBot's {@code box_init} with {@code hostRoot} as host root and mount root, skills below. */
  private static void initLocal(RpcClient client) {
    client.callData(
        "box_init",
        "{\"local\": {\"host_root\": \""
            + hostRoot
            + "\", \"allowed_mount_roots\": [\""
            + hostRoot
            + "\"], \"skills_root\": \"skills\"}}",
        null);
  }

  @AfterAll
  static void stop() {
    rpc.close();
    server.close();
  }

  private static String context(String workspace) {
    return "{\"instance_uuid\": \""
        + LangBotServers.INSTANCE
        + "\", \"workspace_uuid\": \""
        + workspace
        + "\", \"placement_generation\": 1}";
  }

  private static String error(JsonNode response) {
    assertThat(response.path("code").asInt()).isEqualTo(1);
    return response.path("message").asText();
  }

  private static String quoted(String text) {
    return RpcClient.JSON.valueToTree(text).toString();
  }

  /** Sends {@code bytes} as LangBot does: 16 KiB chunks of base64 under one key. */
  private static void upload(String key, byte[] bytes) {
    int chunk = 16 * 1024;
    int amount = Math.max(1, (bytes.length + chunk - 1) / chunk);
    for (int i = 0; i < amount; i++) {
      byte[] part = Arrays.copyOfRange(bytes, i * chunk, Math.min(bytes.length, (i + 1) * chunk));
      rpc.callData(
          "__file_chunk",
          "{\"file_key\": \""
              + key
              + "\", \"file_length\": "
              + bytes.length
              + ", \"chunk_base64\": \""
              + Base64.getEncoder().encodeToString(part)
              + "\", \"chunk_index\": "
              + i
              + ", \"chunk_amount\": "
              + amount
              + ", \"chunk_size\": "
              + chunk
              + "}",
          null);
    }
  }

  private static Path rpcFile(String key) {
    return server.config().dataDir().resolve("rpc-files").resolve(key);
  }

  private static long filesUnder(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return 0;
    }
    try (Stream<Path> files = Files.walk(dir)) {
      return files.filter(Files::isRegularFile).count();
    }
  }

  @Test
  void zipUpload_isPreviewedInstalled_andMountedReadOnlyIntoASandbox() throws IOException {
    String ctx = context("ws-skills");
    byte[] archive =
        ZipBytes.of(Map.of("weather/SKILL.md", SKILL, "weather/forecast.sh", "echo sunny\n"));
    String key = "0011223344556677-00112233445566778899aabbccddeeff.zip";

    upload(key, archive);
    JsonNode preview =
        rpc.callData(
            "box_preview_skill_zip",
            "{\"file_key\": \"" + key + "\", \"filename\": \"weather.zip\"}",
            ctx);
    assertThat(preview.path("skills")).hasSize(1);
    assertThat(preview.path("skills").get(0).path("name").asText()).isEqualTo("weather");
    assertThat(preview.path("skills").get(0).path("source_path").asText()).isEmpty();
    assertThat(rpcFile(key)).doesNotExist();

    upload(key, archive);
    JsonNode installed =
        rpc.callData(
            "box_install_skill_zip",
            "{\"file_key\": \"" + key + "\", \"filename\": \"weather.zip\"}",
            ctx);
    assertThat(rpcFile(key)).doesNotExist();
    JsonNode skill = installed.path("skills").get(0);
    String packageRoot = skill.path("package_root").asText();
    assertThat(Path.of(packageRoot)).startsWith(hostRoot.resolve("skills").resolve("tenants"));
    assertThat(skill.path("description").asText()).isEqualTo("Look up the weather");
    assertThat(skill.path("entry_file").asText()).isEqualTo("SKILL.md");

    JsonNode listed = rpc.callData("box_list_skills", "{}", ctx);
    assertThat(listed.path("skills").findValuesAsText("name")).containsExactly("weather");
    JsonNode read =
        rpc.callData(
            "box_read_skill_file", "{\"name\": \"weather\", \"path\": \"forecast.sh\"}", ctx);
    assertThat(read.path("content").asText()).isEqualTo("echo sunny\n");
    JsonNode files = rpc.callData("box_list_skill_files", "{\"name\": \"weather\"}", ctx);
    assertThat(files.path("entries").findValuesAsText("path"))
        .containsExactly("SKILL.md", "forecast.sh");
    assertThat(files.path("truncated").asBoolean()).isFalse();

    // Writable by anyone on the host: only a read-only mount can stop the sandbox's write.
    Files.setPosixFilePermissions(
        Path.of(packageRoot, "SKILL.md"), PosixFilePermissions.fromString("rw-rw-rw-"));
    JsonNode exec =
        rpc.callData(
            "box_exec",
            "{\"session_id\": \"chat\", \"cmd\": \"cat /workspace/.skills/weather/SKILL.md;"
                + " if echo changed > /workspace/.skills/weather/SKILL.md; then echo WROTE;"
                + " else echo READ-ONLY; fi\", \"extra_mounts\": [{\"host_path\": "
                + quoted(packageRoot)
                + ", \"mount_path\": \"/workspace/.skills/weather\", \"mode\": \"rw\"}]}",
            ctx);
    assertThat(exec.path("stdout").asText()).contains("Run ./forecast.sh <city>.");
    assertThat(exec.path("stdout").asText()).endsWith("READ-ONLY").doesNotContain("WROTE");
    assertThat(Files.readString(Path.of(packageRoot, "SKILL.md"))).isEqualTo(SKILL);
    JsonNode writable =
        rpc.callData(
            "box_exec",
            "{\"session_id\": \"control\", \"cmd\": \"echo changed >"
                + " /workspace/.skills/x/SKILL.md && echo WROTE\", \"extra_mounts\":"
                + " [{\"host_path\": "
                + quoted(writableCopy(Path.of(packageRoot)).toString())
                + ", \"mount_path\": \"/workspace/.skills/x\", \"mode\": \"rw\"}]}",
            ctx);
    assertThat(writable.path("stdout").asText()).isEqualTo("WROTE");
  }

  /**
   * A copy of the package outside the skills root, equally writable: the control that shows the
   * sandbox could write the file if its mount were not read-only.
   */
  private static Path writableCopy(Path packageRoot) throws IOException {
    Path copy = Files.createDirectories(hostRoot.resolve("plain"));
    Files.setPosixFilePermissions(copy, PosixFilePermissions.fromString("rwxrwxrwx"));
    Path file = Files.copy(packageRoot.resolve("SKILL.md"), copy.resolve("SKILL.md"));
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-rw-rw-"));
    return copy;
  }

  @Test
  void skillsAreEditedThroughTheActions_andStayInTheirWorkspace() throws IOException {
    String ctx = context("ws-edit");
    String other = context("ws-other");
    JsonNode created =
        rpc.callData(
            "box_create_skill",
            "{\"skill\": {\"name\": \"notes\", \"display_name\": \"Notes\","
                + " \"instructions\": \"Keep notes.\"}}",
            ctx);
    String packageRoot = created.path("skill").path("package_root").asText();
    assertThat(created.path("skill").path("display_name").asText()).isEqualTo("Notes");

    JsonNode written =
        rpc.callData(
            "box_write_skill_file",
            "{\"name\": \"notes\", \"path\": \"docs/a.md\", \"content\": \"héllo\"}",
            ctx);
    assertThat(written.path("bytes_written").asInt()).isEqualTo(6);
    assertThat(written.path("skill").path("name").asText()).isEqualTo("notes");
    JsonNode updated =
        rpc.callData(
            "box_update_skill",
            "{\"name\": \"notes\", \"skill\": {\"description\": \"Notes kept\"}}",
            ctx);
    assertThat(updated.path("skill").path("description").asText()).isEqualTo("Notes kept");
    JsonNode scanned =
        rpc.callData("box_scan_skill_directory", "{\"path\": " + quoted(packageRoot) + "}", ctx);
    assertThat(scanned.path("name").asText()).isEqualTo("notes");

    assertThat(
            error(
                rpc.call(
                    "box_read_skill_file", "{\"name\": \"notes\", \"path\": \"../../x\"}", ctx)))
        .isEqualTo("BoxValidationError: path must stay within the skill package root");
    assertThat(rpc.callData("box_get_skill", "{\"name\": \"notes\"}", other).path("skill").isNull())
        .isTrue();
    assertThat(
            error(
                rpc.call(
                    "box_scan_skill_directory", "{\"path\": " + quoted(packageRoot) + "}", other)))
        .isEqualTo("BoxValidationError: scan path must stay within the Workspace skill root");
    assertThat(
            error(
                rpc.call(
                    "box_exec",
                    "{\"session_id\": \"peek\", \"cmd\": \"true\", \"extra_mounts\":"
                        + " [{\"host_path\": "
                        + quoted(packageRoot)
                        + ", \"mount_path\": \"/workspace/.skills/notes\"}]}",
                    other)))
        .isEqualTo(
            "BoxValidationError: host_path "
                + packageRoot
                + " belongs to another Workspace's skills");
    assertThat(error(rpc.call("box_create_skill", "{\"skill\": {\"name\": \"no way\"}}", ctx)))
        .isEqualTo(
            "BoxValidationError: Skill name can only contain letters, numbers, hyphens and"
                + " underscores");

    assertThat(
            rpc.callData("box_delete_skill", "{\"name\": \"notes\"}", ctx).path("deleted").asText())
        .isEqualTo("notes");
    assertThat(Path.of(packageRoot)).doesNotExist();
  }

  @Test
  void maliciousZip_isRefused_andLeavesNothingBehind() throws IOException {
    String ctx = context("ws-evil");
    String key = "8899aabbccddeeff-00112233445566778899aabbccddeeff.zip";
    upload(key, ZipBytes.of(Map.of("evil/SKILL.md", SKILL, "evil/../../../escaped.txt", "x")));
    assertThat(
            error(
                rpc.call(
                    "box_install_skill_zip",
                    "{\"file_key\": \"" + key + "\", \"filename\": \"evil.zip\"}",
                    ctx)))
        .isEqualTo(
            "BoxValidationError: Archive contains an unsafe path: evil/../../../escaped.txt");
    assertThat(rpcFile(key)).doesNotExist();
    Path skills = hostRoot.resolve("skills");
    assertThat(
            filesUnder(
                skills
                    .resolve("tenants")
                    .resolve(Tenancy.namespace(LangBotServers.INSTANCE, "ws-evil"))))
        .isZero();
    assertThat(filesUnder(skills.resolve(".staging"))).isZero();
    assertThat(skills.resolve("escaped.txt")).doesNotExist();
    assertThat(hostRoot.resolve("escaped.txt")).doesNotExist();
    assertThat(rpc.callData("box_list_skills", "{}", ctx).path("skills")).isEmpty();

    assertThat(
            error(
                rpc.call(
                    "box_preview_skill_zip",
                    "{\"file_key\": \"ffffffffffffffff-00000000000000000000000000000000.zip\"}",
                    ctx)))
        .startsWith("BoxValidationError: Uploaded file ");
  }

  @Test
  void skillsAreFilesOfTheHostRoot_soTheNextServerSeesThem() throws IOException {
    String ctx = context("ws-restart");
    rpc.callData(
        "box_create_skill",
        "{\"skill\": {\"name\": \"lasting\", \"instructions\": \"Still here.\"}}",
        ctx);

    try (BoxServer next =
            LangBotServers.start(Map.of("backend", "bwrap"), LangBotServers.ENV, false);
        RpcClient again = RpcClient.asLangBot(next.port())) {
      initLocal(again);
      JsonNode skill = again.callData("box_get_skill", "{\"name\": \"lasting\"}", ctx);
      assertThat(skill.path("skill").path("instructions").asText()).isEqualTo("Still here.");
    }
  }
}
