package dev.box.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.box.testclient.Answer;
import dev.box.testclient.PrivateWorkspaces;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Session create, reuse, conflict, recreate, capacity, delete and mounts through the API. */
class SessionsTest {
  @AutoClose private static final TestServer box = TestServer.start("max_sessions", "6");

  @TempDir static Path hostDir;

  @Test
  void create_answers201ThenReuse_answers200WithTheSameSandbox() {
    Answer created = box.post("/v1/sessions/reuse", "{\"memory_mb\":256}");
    Answer reused = box.post("/v1/sessions/reuse", "{\"memory_mb\":256,\"cmd\":\"ignored\"}");

    assertThat(created.status()).isEqualTo(201);
    assertThat(created.text("session_id")).isEqualTo("reuse");
    assertThat(created.body().path("memory_mb").asInt()).isEqualTo(256);
    assertThat(reused.status()).isEqualTo(200);
    assertThat(reused.text("backend_session_id")).isEqualTo(created.text("backend_session_id"));
    assertThat(box.get("/v1/sessions/reuse").text("created_at"))
        .isEqualTo(created.text("created_at"));
    assertThat(box.get("/v1/sessions").body().findValuesAsText("session_id")).contains("reuse");
    box.delete("/v1/sessions/reuse");
  }

  @Test
  void reuseWithAnotherComparedField_isAConflictNamingTheField() {
    box.post("/v1/sessions/conflict", "{}");

    Answer a = box.post("/v1/sessions/conflict", "{\"memory_mb\":1024}");
    Answer b = box.exec("conflict", "true", "\"network\":\"on\"");

    assertThat(a.status()).isEqualTo(409);
    assertThat(a.errorCode()).isEqualTo("session_conflict");
    assertThat(a.errorMessage())
        .isEqualTo("Box session conflict already exists with memory_mb=512");
    assertThat(b.errorMessage()).isEqualTo("Box session conflict already exists with network=off");
    box.delete("/v1/sessions/conflict");
  }

  @Test
  void changedExtraMounts_recreateTheSessionWithTheNewMount() throws Exception {
    Path one = Files.createDirectories(hostDir.resolve("one"));
    Path two = Files.createDirectories(hostDir.resolve("two"));
    Files.writeString(two.resolve("hello"), "from two");
    box.exec("mounts", "touch /tmp/marker", mount(one, "/mnt/data", "ro"));

    Answer a = box.exec("mounts", "ls /tmp; cat /mnt/data/hello", mount(two, "/mnt/data", "ro"));

    assertThat(a.text("stdout")).isEqualTo("from two");
    box.delete("/v1/sessions/mounts");
  }

  @Test
  void hostPathMounts_honourTheirMode() throws Exception {
    Path rw = Files.createDirectories(hostDir.resolve("rw"));
    Files.setPosixFilePermissions(rw, PosixFilePermissions.fromString("rwxrwxrwx"));
    Path ro = Files.createDirectories(hostDir.resolve("ro"));
    Files.writeString(ro.resolve("in"), "x");

    Answer writable =
        box.exec("host-rw", "echo hi > /workspace/out", "\"host_path\":\"" + rw + "\"");
    Answer readOnly =
        box.exec(
            "host-ro",
            "cat /workspace/in; echo y > /workspace/in",
            "\"host_path\":\"" + ro + "\",\"host_path_mode\":\"ro\"");

    assertThat(writable.body().path("ok").asBoolean()).isTrue();
    assertThat(Files.readString(rw.resolve("out"))).isEqualTo("hi\n");
    assertThat(readOnly.text("stdout")).isEqualTo("x");
    assertThat(readOnly.text("stderr")).contains("Read-only file system");
    assertThat(Files.readString(ro.resolve("in"))).isEqualTo("x");
    box.delete("/v1/sessions/host-rw");
    box.delete("/v1/sessions/host-ro");
    assertThat(Files.readString(rw.resolve("out"))).isEqualTo("hi\n");
  }

  @Test
  void aHostPathNeitherTheSandboxUserNorItsOwnerCanUse_isRefusedWithItsOwnerAndMode()
      throws Exception {
    // A folder its owner can use is mounted idmapped (IdmappedHostPathTest); these its owner
    // cannot use as asked either.
    Path rootOnly = Files.createDirectories(hostDir.resolve("root-only"));
    Files.setPosixFilePermissions(rootOnly, PosixFilePermissions.fromString("---------"));
    Path readable = Files.createDirectories(hostDir.resolve("readable"));
    Files.setPosixFilePermissions(readable, PosixFilePermissions.fromString("r-xr-xr-x"));

    Answer ro =
        box.post(
            "/v1/sessions/no-entry",
            "{\"host_path\":\"" + rootOnly + "\",\"host_path_mode\":\"ro\"}");
    Answer rw = box.post("/v1/sessions/no-write", "{\"host_path\":\"" + readable + "\"}");

    assertThat(ro.status()).isEqualTo(400);
    assertThat(ro.errorMessage())
        .isEqualTo(
            "host_path "
                + rootOnly
                + " (owner uid 0, group 0, mode 0000) is not readable by the sandbox user, host uid"
                + " 2000000: give that uid access (chown, chgrp or chmod; ACLs are not consulted)");
    assertThat(rw.status()).isEqualTo(400);
    assertThat(rw.errorMessage())
        .contains("(owner uid 0, group 0, mode 0555) is not writable by the sandbox user")
        .endsWith(", or mount it read-only");
    assertThat(box.get("/v1/sessions").body().toString()).doesNotContain("no-entry", "no-write");
  }

  @Test
  void aMissingReadWriteHostPath_isCreatedForTheSandboxUser() throws Exception {
    Path fresh = hostDir.resolve("fresh/deeper");

    Answer a =
        box.exec(
            "fresh",
            "echo made > /workspace/f && cat /workspace/f",
            "\"host_path\":\"" + fresh + "\"");

    assertThat(a.text("stdout")).isEqualTo("made\n");
    assertThat(Files.getAttribute(fresh, "unix:uid")).isEqualTo(2_000_000);
    assertThat(Files.getAttribute(fresh.resolve("f"), "unix:uid")).isEqualTo(2_000_000);
    box.delete("/v1/sessions/fresh");
  }

  @Test
  void blockedHostPaths_areRefusedBeforeAnySandboxStarts() throws Exception {
    Path escape = Files.createSymbolicLink(hostDir.resolve("escape"), Path.of("/etc"));
    for (String path : new String[] {"/etc", "/", "/proc/self", escape.toString()}) {
      Answer a = box.post("/v1/sessions/blocked", "{\"host_path\":\"" + path + "\"}");

      assertThat(a.status()).as(path).isEqualTo(400);
      assertThat(a.errorMessage()).isEqualTo("host_path " + path + " is blocked for security");
    }
    Answer extra =
        box.post("/v1/sessions/blocked", "{" + mount(Path.of("/root"), "/mnt", "ro") + "}");
    Answer dataDir = box.post("/v1/sessions/blocked", "{\"host_path\":\"" + box.dataDir + "\"}");

    assertThat(extra.errorMessage()).isEqualTo("host_path /root is blocked for security");
    assertThat(dataDir.status()).isEqualTo(400);
    assertThat(box.get("/v1/sessions/blocked").status()).isEqualTo(404);
  }

  @Test
  void deletingASession_removesItsPrivateWorkspace() throws Exception {
    box.exec("private", "echo data > /workspace/file");
    assertThat(PrivateWorkspaces.names(box.dataDir)).anyMatch(name -> name.contains("_private-"));

    Answer deleted = box.delete("/v1/sessions/private");

    assertThat(deleted.body().path("deleted").asText()).isEqualTo("private");
    assertThat(PrivateWorkspaces.names(box.dataDir)).noneMatch(name -> name.contains("_private-"));
    assertThat(box.delete("/v1/sessions/private").errorCode()).isEqualTo("session_not_found");
    assertThat(box.get("/v1/sessions/private").errorMessage())
        .isEqualTo("session private not found");
  }

  @Test
  void sessionIdsWithUnusualCharacters_work() {
    Answer a = box.exec("a%20b%2Fc", "echo ok");

    assertThat(a.text("session_id")).isEqualTo("a b/c");
    assertThat(box.delete("/v1/sessions/a%20b%2Fc").status()).isEqualTo(200);
  }

  private static String mount(Path host, String target, String mode) {
    return "\"extra_mounts\":[{\"host_path\":\""
        + host
        + "\",\"mount_path\":\""
        + target
        + "\",\"mode\":\""
        + mode
        + "\"}]";
  }
}
