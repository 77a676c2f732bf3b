package dev.box.server;

import static dev.box.server.ErrorAnswers.assertError;
import static dev.box.testclient.BoxHttp.query;
import static dev.box.testclient.BoxHttp.quote;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.box.api.internal.FileTrees;
import dev.box.testclient.BoxHttp.Bytes;
import dev.box.testclient.ManualClock;
import dev.box.testclient.TarBytes;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The files routes through the real server in real bubblewrap sandboxes: every path is resolved by
 * the sandbox's own view, bounds answer 413, and a hostile archive extracts nothing.
 */
class FilesRoutesTest {
  private static final int MAX_FILE = 1024 * 1024;
  private static final int MAX_ARCHIVE = 2 * 1024 * 1024;
  private static final ManualClock clock = new ManualClock(Instant.parse("2026-01-01T00:00:00Z"));
  private static final TestServer box =
      TestServer.start(
          clock,
          "max_file_bytes",
          "" + MAX_FILE,
          "max_archive_bytes",
          "" + MAX_ARCHIVE,
          "max_archive_entries",
          "20");

  @AfterAll
  static void stop() {
    box.close();
  }

  private static String files(String session, String path) {
    return "/v1/sessions/" + session + "/files?path=" + query(path);
  }

  private static String archive(String session, String path) {
    return "/v1/sessions/" + session + "/archive?path=" + query(path);
  }

  private static Bytes put(String route, byte[] body) {
    return box.http().sendBytes("PUT", route, body);
  }

  /** A PUT of {@code body} as a stream of unknown length, which the client sends chunked. */
  private static Bytes putStreamed(String route, byte[] body) {
    return box.http()
        .sendBytes(
            "PUT",
            route,
            HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(body)));
  }

  private static Bytes get(String route) {
    return box.http().sendBytes("GET", route, new byte[0]);
  }

  private static String sh(String session, String cmd) {
    return box.exec(session, cmd).text("stdout");
  }

  private static void create(String session) {
    assertThat(box.post("/v1/sessions/" + session, "{}").status()).isIn(200, 201);
  }

  private static byte[] everyByteValue(int repeats) {
    byte[] data = new byte[256 * repeats + 7];
    for (int i = 0; i < data.length; i++) {
      data[i] = (byte) (i * 31 + i / 256);
    }
    return data;
  }

  @Test
  void binaryFile_roundTripsEveryByteValue_andItsParentsAreCreated() {
    create("bin");
    byte[] data = everyByteValue(1000);

    Bytes written = put(files("bin", "deep/er/data.bin"), data);
    Bytes read = get(files("bin", "/workspace/deep/er/data.bin"));

    assertThat(written.status()).isEqualTo(200);
    assertThat(written.json().path("path").asText()).isEqualTo("/workspace/deep/er/data.bin");
    assertThat(written.json().path("size").asLong()).isEqualTo(data.length);
    assertThat(read.status()).isEqualTo(200);
    assertThat(read.body()).isEqualTo(data);
    assertThat(sh("bin", "stat -c %s /workspace/deep/er/data.bin; ls -A /workspace/deep/er"))
        .isEqualTo(data.length + "\ndata.bin\n");
  }

  @Test
  void upload_ofUnknownLength_isStreamedAndReplacesTheFile() {
    create("chunked");
    put(files("chunked", "f"), "old".getBytes(StandardCharsets.UTF_8));
    byte[] data = everyByteValue(10);

    Bytes written = putStreamed(files("chunked", "f"), data);

    assertThat(written.status()).isEqualTo(200);
    assertThat(get(files("chunked", "f")).body()).isEqualTo(data);
  }

  @Test
  void list_reportsNamesTypesSizesModesAndTimes() {
    create("list");
    sh(
        "list",
        "mkdir -p /workspace/l/sub && printf 12345 > /workspace/l/five && chmod 640 /workspace/l/five"
            + " && ln -s five /workspace/l/link && touch -d @1700000000 /workspace/l/five");

    JsonNode entries = box.get("/v1/sessions/list/files/list?path=" + query("l")).body();
    Map<String, JsonNode> byName = new HashMap<>();
    entries.path("entries").forEach(e -> byName.put(e.path("name").asText(), e));

    assertThat(entries.path("truncated").asBoolean()).isFalse();
    assertThat(byName).containsOnlyKeys("five", "link", "sub");
    JsonNode five = byName.getOrDefault("five", missing());
    assertThat(five.path("path").asText()).isEqualTo("/workspace/l/five");
    assertThat(five.path("type").asText()).isEqualTo("file");
    assertThat(five.path("size").asLong()).isEqualTo(5);
    assertThat(five.path("mode").asText()).isEqualTo("0640");
    assertThat(five.path("mtime").asText()).isEqualTo("2023-11-14T22:13:20Z");
    assertThat(byName.getOrDefault("link", missing()).path("type").asText()).isEqualTo("symlink");
    assertThat(byName.getOrDefault("sub", missing()).path("type").asText()).isEqualTo("dir");
    JsonNode file = box.get("/v1/sessions/list/files/list?path=" + query("l/five")).body();
    assertThat(file.path("entries").get(0).path("path").asText()).isEqualTo("/workspace/l/five");
  }

  private static JsonNode missing() {
    return TestServer.JSON.missingNode();
  }

  @Test
  void delete_removesAFileOrATree_andThenItIsNotFound() {
    create("del");
    sh("del", "mkdir -p /workspace/t/a && touch /workspace/t/a/x /workspace/f");

    Bytes file = box.http().sendBytes("DELETE", files("del", "f"), new byte[0]);
    Bytes tree = box.http().sendBytes("DELETE", files("del", "/workspace/t"), new byte[0]);

    assertThat(file.status()).isEqualTo(200);
    assertThat(file.json().path("deleted").asText()).isEqualTo("/workspace/f");
    assertThat(tree.status()).isEqualTo(200);
    assertThat(sh("del", "ls -A /workspace")).isEmpty();
    Bytes again = box.http().sendBytes("DELETE", files("del", "f"), new byte[0]);
    assertError(again, 404, "file_not_found");
  }

  @Test
  void missingFileOrSession_isNotFound_andADirectoryIsAConflict() {
    create("missing");

    Bytes file = get(files("missing", "/workspace/nope"));
    Bytes session = get(files("no-such-session", "/workspace/x"));
    Bytes dir = get(files("missing", "/workspace"));

    assertError(file, 404, "file_not_found");
    assertError(session, 404, "session_not_found");
    assertError(dir, 409, "file_type_conflict");
  }

  @Test
  void badPaths_areValidationErrors() {
    create("badpath");

    Bytes nul = get("/v1/sessions/badpath/files?path=%2Fworkspace%2Fa%00b");
    Bytes empty = get("/v1/sessions/badpath/files?path=");
    Bytes none = get("/v1/sessions/badpath/files");
    Bytes root = box.http().sendBytes("DELETE", files("badpath", "/"), new byte[0]);

    assertError(nul, 400, "validation_error").contains("NUL");
    assertThat(empty.status()).isEqualTo(400);
    assertThat(none.status()).isEqualTo(400);
    assertThat(root.status()).isEqualTo(400);
  }

  @Test
  void uploadBeyondTheBound_is413_andLeavesNothingBehind() {
    create("big");
    byte[] data = new byte[MAX_FILE + 1];

    Bytes sized = put(files("big", "d/big"), data);
    Bytes chunked = putStreamed(files("big", "d/big"), data);

    assertError(sized, 413, "payload_too_large");
    assertThat(chunked.status()).isEqualTo(413);
    assertThat(chunked.json().path("error").path("message").asText()).contains("max_file_bytes");
    assertThat(sh("big", "ls -A /workspace/d")).isEmpty();
  }

  @Test
  void downloadBeyondTheBound_is413BeforeAnyByte() {
    create("bigread");
    sh("bigread", "head -c " + (MAX_FILE + 1) + " /dev/zero > /workspace/big");

    Bytes read = get(files("bigread", "big"));

    assertError(read, 413, "payload_too_large");
  }

  @Test
  void writeIntoAReadOnlyMount_isRefused() throws IOException {
    Path host = Files.createTempDirectory("box-files-ro-");
    Files.setPosixFilePermissions(host, PosixFilePermissions.fromString("rwxr-xr-x"));
    Files.writeString(host.resolve("kept"), "kept");
    try {
      var created =
          box.post(
              "/v1/sessions/ro",
              "{\"host_path\":" + quote(host.toString()) + ",\"host_path_mode\":\"ro\"}");
      assertThat(created.status()).as(created.body().toString()).isEqualTo(201);

      Bytes write = put(files("ro", "new"), "x".getBytes(StandardCharsets.UTF_8));
      Bytes delete = box.http().sendBytes("DELETE", files("ro", "kept"), new byte[0]);
      Bytes read = get(files("ro", "kept"));

      assertError(write, 409, "read_only");
      assertThat(delete.errorCode()).isEqualTo("read_only");
      assertThat(new String(read.body(), StandardCharsets.UTF_8)).isEqualTo("kept");
      try (var listing = Files.list(host)) {
        assertThat(listing.map(p -> p.getFileName().toString())).containsExactly("kept");
      }
    } finally {
      box.delete("/v1/sessions/ro");
      FileTrees.deleteTreeQuietly(host);
    }
  }

  @Test
  void symlinksToHostFiles_readTheSandboxsOwnView_neverTheHostFile() throws IOException {
    Path secret = Files.createTempFile(Path.of("/tmp"), "box-files-secret-", ".txt");
    String content = "host-secret-" + System.nanoTime();
    Files.writeString(secret, content);
    try {
      create("links");
      sh(
          "links",
          "ln -s "
              + secret
              + " /workspace/host && ln -s /etc/shadow /workspace/shadow"
              + " && ln -s ../../../../.. /workspace/up");

      Bytes host = get(files("links", "host"));
      Bytes viaDots = get(files("links", "/workspace/up" + secret));
      Bytes relative = get(files("links", "../../../.." + secret));
      Bytes shadow = get(files("links", "shadow"));

      assertThat(host.status()).isEqualTo(404);
      assertThat(viaDots.status()).isEqualTo(404);
      assertThat(relative.status()).isEqualTo(404);
      assertThat(new String(host.body(), StandardCharsets.UTF_8)).doesNotContain(content);
      // The sandbox's /etc/shadow, if it has one, is its own and not readable by its user.
      assertThat(shadow.status()).isIn(403, 404);
    } finally {
      Files.delete(secret);
    }
  }

  @Test
  void dotDot_isResolvedInsideTheSandbox() {
    create("dots");

    Bytes written =
        put(files("dots", "a/../../tmp/dots.txt"), "in".getBytes(StandardCharsets.UTF_8));

    assertThat(written.status()).isEqualTo(200);
    assertThat(written.json().path("path").asText()).isEqualTo("/workspace/a/../../tmp/dots.txt");
    assertThat(sh("dots", "cat /tmp/dots.txt")).isEqualTo("in");
    assertThat(Path.of("/tmp/dots.txt")).doesNotExist();
  }

  @Test
  void fileOperations_countAsSessionActivity() {
    create("activity");
    clock.advance(Duration.ofMinutes(3));
    Instant now = clock.instant();

    put(files("activity", "f"), new byte[] {1});

    assertThat(box.get("/v1/sessions/activity").text("last_used_at")).isEqualTo(now.toString());
  }

  @Test
  void archive_persistsATree_thatHydratesAnotherSessionIdentically() throws IOException {
    create("persist");
    sh(
        "persist",
        "mkdir -p /workspace/p/src/empty /workspace/p/bin && printf 'hello\\n' > /workspace/p/src/a.txt"
            + " && head -c 5000 /dev/urandom > /workspace/p/bin/blob && chmod 755 /workspace/p/bin/blob"
            + " && ln -s ../src/a.txt /workspace/p/bin/link");
    String tree =
        "cd /workspace/%s && find . -printf '%%y %%p %%l\\n' | sort && find . -type f | sort | xargs"
            + " sha256sum";

    Bytes tar = get(archive("persist", "p"));
    create("hydrate");
    Bytes extracted = put(archive("hydrate", "/workspace/copy"), tar.body());

    assertThat(tar.status()).isEqualTo(200);
    assertThat(TarBytes.names(tar.body())).contains("./src/a.txt", "./bin/link");
    assertThat(extracted.status()).isEqualTo(200);
    assertThat(extracted.json().path("path").asText()).isEqualTo("/workspace/copy");
    assertThat(sh("hydrate", tree.formatted("copy"))).isEqualTo(sh("persist", tree.formatted("p")));
  }

  @Test
  void archiveDownload_thatGrowsBeyondTheBound_isCutNotEndedCleanly() {
    create("cut");
    // Small files: their apparent size passes the first check, their tar (a 512-byte header and a
    // padded block each) does not fit the bound.
    sh(
        "cut",
        "mkdir /workspace/many && cd /workspace/many && for i in $(seq 2200); do echo > f$i; done");

    assertThatThrownBy(() -> get(archive("cut", "many")))
        .isInstanceOf(java.io.UncheckedIOException.class);
    assertThat(get(archive("cut", "many/f1")).status()).isEqualTo(200);
  }

  static Object[][] hostileArchives() {
    return new Object[][] {
      {"absolute name", TarBytes.builder().file("ok", "x").file("/etc/evil", "x").build(), 400},
      {"climbing name", TarBytes.builder().file("ok", "x").file("a/../../evil", "x").build(), 400},
      {"symlink to /etc", TarBytes.builder().file("ok", "x").symlink("etc", "/etc").build(), 400},
      {
        "climbing symlink", TarBytes.builder().file("ok", "x").symlink("up", "a/../..").build(), 400
      },
      {
        "write through an archived symlink",
        TarBytes.builder().file("ok", "x").symlink("here", ".").file("here/x", "x").build(),
        400
      },
      {
        "hard link out",
        TarBytes.builder().file("ok", "x").hardlink("h", "../../etc/passwd").build(),
        400
      },
      {"character device", TarBytes.builder().file("ok", "x").special("null", '3').build(), 400},
      {"FIFO", TarBytes.builder().file("ok", "x").special("fifo", '6').build(), 400},
      {"not a tar", "just text, not an archive".repeat(40).getBytes(StandardCharsets.UTF_8), 400},
      {"too many entries", tooManyEntries(), 413},
      {"too big", TarBytes.builder().file("big", new byte[MAX_ARCHIVE]).build(), 413},
    };
  }

  private static byte[] tooManyEntries() {
    TarBytes tar = TarBytes.builder();
    for (int i = 0; i < 21; i++) {
      tar.file("f" + i, "x");
    }
    return tar.build();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("hostileArchives")
  void hostileArchive_isRefused_andNothingIsExtracted(String what, byte[] tar, int status) {
    create("hostile");

    Bytes answer = put(archive("hostile", "/workspace/h"), tar);

    assertThat(answer.status()).isEqualTo(status);
    assertThat(sh("hostile", "ls -A /workspace/h 2>&1; ls -A /workspace"))
        .isEqualTo("ls: cannot access '/workspace/h': No such file or directory\n");
  }
}
