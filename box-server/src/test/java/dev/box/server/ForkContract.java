package dev.box.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.box.testclient.Answer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Forks and snapshots through the real server, on the backend of {@link #box}: a fork's files match
 * its source's and then diverge, a snapshot brings back the files it was taken with, and a host
 * folder is mounted again rather than copied.
 */
abstract class ForkContract {
  /** The server the tests run against, started on one backend for the whole class. */
  abstract TestServer box();

  @TempDir Path tmp;

  @Test
  void aFork_hasTheSourcesFiles_andThenEachSeesOnlyItsOwnWrites() {
    TestServer box = box();
    box.exec(
        "fork-src",
        "mkdir -p /workspace/d && echo one > /workspace/d/a && chmod 0751 /workspace/d");
    box.exec("fork-src", "sleep 600 > /dev/null 2>&1 &");

    Answer fork = box.post("/v1/sessions/fork-src/fork", "{\"session_id\": \"fork-dst\"}");

    assertThat(fork.status()).as(fork.body().toString()).isEqualTo(201);
    assertThat(fork.text("session_id")).isEqualTo("fork-dst");
    assertThat(fork.body().path("persistent").asBoolean()).isFalse();
    assertThat(box.exec("fork-dst", "cat /workspace/d/a; stat -c %a /workspace/d").stdout())
        .isEqualTo("one\n751\n");
    String sleeps =
        "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done"
            + " | grep -c '^sleep 600'";
    assertThat(box.exec("fork-src", sleeps).stdout()).isEqualTo("1\n");
    assertThat(box.exec("fork-dst", sleeps).stdout()).isEqualTo("0\n");
    box.exec("fork-src", "echo source > /workspace/s");
    box.exec("fork-dst", "echo fork > /workspace/f; echo changed > /workspace/d/a");
    assertThat(box.exec("fork-src", "ls /workspace; cat /workspace/d/a").stdout())
        .isEqualTo("d\ns\none\n");
    assertThat(box.exec("fork-dst", "ls /workspace; cat /workspace/d/a").stdout())
        .isEqualTo("d\nf\nchanged\n");
    box.delete("/v1/sessions/fork-dst");
    assertThat(box.exec("fork-src", "cat /workspace/d/a").stdout()).isEqualTo("one\n");
    box.delete("/v1/sessions/fork-src");
  }

  @Test
  void aFork_ofAHostFolder_mountsTheSameFolderAgain() throws IOException {
    TestServer box = box();
    Path dir = Files.createTempDirectory(tmp, "host-");
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
    String spec = PauseContract.hostPath(dir);
    box.exec("fork-host", "echo from-source > /workspace/a", spec);

    Answer fork = box.post("/v1/sessions/fork-host/fork", "{\"session_id\": \"fork-host-2\"}");

    assertThat(fork.status()).as(fork.body().toString()).isEqualTo(201);
    assertThat(fork.text("host_path")).isEqualTo(dir.toString());
    box.exec("fork-host-2", "echo from-fork > /workspace/b", spec);
    assertThat(Files.readString(dir.resolve("b"))).isEqualTo("from-fork\n");
    assertThat(box.exec("fork-host", "cat /workspace/b", spec).stdout()).isEqualTo("from-fork\n");
    Answer snapshot = box.post("/v1/sessions/fork-host/snapshots", "{\"name\": \"of-host\"}");
    assertThat(snapshot.status()).isEqualTo(400);
    assertThat(snapshot.errorMessage()).contains("no private workspace");
    box.delete("/v1/sessions/fork-host");
    box.delete("/v1/sessions/fork-host-2");
  }

  @Test
  void aSnapshot_bringsBackItsFiles_inANewSession() {
    TestServer box = box();
    box.exec("snap-src", "echo kept > /workspace/a");

    Answer taken = box.post("/v1/sessions/snap-src/snapshots", "{\"name\": \"contract-1\"}");

    assertThat(taken.status()).as(taken.body().toString()).isEqualTo(201);
    assertThat(taken.text("name")).isEqualTo("contract-1");
    assertThat(taken.text("session_id")).isEqualTo("snap-src");
    assertThat(taken.body().path("size_bytes").asLong()).isEqualTo(5);
    box.exec("snap-src", "echo changed > /workspace/a; echo new > /workspace/b");
    Answer restored =
        box.exec(
            "snap-dst", "ls /workspace; cat /workspace/a", "\"from_snapshot\": \"contract-1\"");
    assertThat(restored.stdout()).isEqualTo("a\nkept\n");
    box.exec("snap-dst", "echo mine > /workspace/a");
    Answer again = box.exec("snap-dst-2", "cat /workspace/a", "\"from_snapshot\": \"contract-1\"");
    assertThat(again.stdout()).isEqualTo("kept\n");
    assertThat(box.delete("/v1/snapshots/contract-1").status()).isEqualTo(204);
    for (String id : new String[] {"snap-src", "snap-dst", "snap-dst-2"}) {
      box.delete("/v1/sessions/" + id);
    }
  }
}
