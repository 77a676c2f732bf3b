package dev.box.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.box.testclient.Answer;
import java.nio.file.Path;
import java.time.Clock;
import org.junit.jupiter.api.Test;

/**
 * {@link ForkContract} on a container engine, and what a fork and a snapshot copy there beyond the
 * workspace: the container's writable root, as an image committed from it. Files the sandbox user
 * wrote outside the workspace are in the fork and in sessions from a snapshot (across a restart
 * too), each side's later writes are its own, and the images go with the last fork or snapshot that
 * uses them.
 */
abstract class ContainerForkContract extends ForkContract {
  /** A session whose root is writable, so that it has something of its own to copy. */
  static final String WRITABLE = "\"read_only_rootfs\": false";

  /** The settings of a server on this engine, as {@link TestServer#docker()}. */
  abstract String[] settings();

  /** The engine the server uses, asked what images the server left. */
  abstract EngineImages engine();

  @Test
  void health_saysAForkCopiesTheWritableRoot() {
    assertThat(box().get("/v1/health").body().path("enforced").path("fork_root").asText())
        .startsWith("the container's writable root too, unless read_only_rootfs");
  }

  @Test
  void aFork_hasTheSourcesWritableRoot_andThenEachSeesOnlyItsOwnWrites() {
    TestServer box = box();
    box.exec(
        "root-src",
        "echo one > /var/tmp/marker && mkdir /var/tmp/d && echo tmp > /tmp/t",
        WRITABLE);

    Answer fork = box.post("/v1/sessions/root-src/fork", "{\"session_id\": \"root-dst\"}");

    assertThat(fork.status()).as(fork.body().toString()).isEqualTo(201);
    assertThat(box.exec("root-dst", "cat /var/tmp/marker /tmp/t; ls /var/tmp", WRITABLE).stdout())
        .isEqualTo("one\ntmp\nd\nmarker\n");
    box.exec("root-src", "echo source > /var/tmp/marker", WRITABLE);
    box.exec("root-dst", "echo fork > /var/tmp/marker; rm /tmp/t", WRITABLE);
    assertThat(box.exec("root-src", "cat /var/tmp/marker; ls /tmp", WRITABLE).stdout())
        .isEqualTo("source\nt\n");
    assertThat(box.exec("root-dst", "cat /var/tmp/marker; ls /tmp", WRITABLE).stdout())
        .isEqualTo("fork\n");
    assertThat(engine().rootsOf(box)).hasSize(1);
    box.delete("/v1/sessions/root-dst");
    assertThat(engine().rootsOf(box)).isEmpty();
    assertThat(box.exec("root-src", "cat /var/tmp/marker", WRITABLE).stdout())
        .isEqualTo("source\n");
    box.delete("/v1/sessions/root-src");
  }

  @Test
  void aPausedSource_isForkedWithItsRoot_andStaysPaused() {
    TestServer box = box();
    box.exec("root-paused", "echo frozen > /var/tmp/marker", WRITABLE);
    box.post("/v1/sessions/root-paused/pause", "");

    Answer fork = box.post("/v1/sessions/root-paused/fork", "{\"session_id\": \"root-paused-2\"}");

    assertThat(fork.status()).as(fork.body().toString()).isEqualTo(201);
    assertThat(box.get("/v1/sessions/root-paused").text("state")).isEqualTo("paused");
    assertThat(box.exec("root-paused-2", "cat /var/tmp/marker", WRITABLE).stdout())
        .isEqualTo("frozen\n");
    box.delete("/v1/sessions/root-paused");
    box.delete("/v1/sessions/root-paused-2");
    assertThat(engine().rootsOf(box)).isEmpty();
  }

  @Test
  void aReadOnlyRoot_isNotCopied() {
    TestServer box = box();
    box.exec("ro-src", "echo a > /workspace/a");

    assertThat(box.post("/v1/sessions/ro-src/fork", "{\"session_id\": \"ro-dst\"}").status())
        .isEqualTo(201);

    assertThat(engine().rootsOf(box)).isEmpty();
    assertThat(box.exec("ro-dst", "cat /workspace/a").stdout()).isEqualTo("a\n");
    box.delete("/v1/sessions/ro-src");
    box.delete("/v1/sessions/ro-dst");
  }

  @Test
  void anImageThatIsACopy_isNotASessionsImage() {
    Answer created =
        box().exec("copy-image", "true", "\"image\": \"box-root-00000000:kept-0000000000000000\"");

    assertThat(created.status()).as(created.body().toString()).isEqualTo(400);
    assertThat(created.errorMessage()).contains("is a copy of a container's writable root");
  }

  /**
   * A snapshot's copy of the root serves sessions from it, on its own engine only; it survives a
   * restart, and a copy whose snapshot was deleted elsewhere goes at the engine's next start.
   */
  @Test
  void aSnapshot_keepsTheWritableRoot_forSessionsFromIt_acrossARestart() {
    Path dataDir = tmp.resolve("data");
    try (TestServer first = TestServer.startOn(dataDir, Clock.systemUTC(), settings())) {
      first.exec("snap-root", "echo kept > /var/tmp/marker", WRITABLE);
      assertThat(first.post("/v1/sessions/snap-root/snapshots", "{\"name\": \"root-1\"}").status())
          .isEqualTo(201);
      assertThat(first.post("/v1/sessions/snap-root/snapshots", "{\"name\": \"root-2\"}").status())
          .isEqualTo(201);
      first.exec("snap-root", "echo changed > /var/tmp/marker", WRITABLE);

      Answer restored =
          first.exec("from-root", "cat /var/tmp/marker", WRITABLE + ", " + from("root-1"));

      assertThat(restored.stdout()).as(restored.body().toString()).isEqualTo("kept\n");
      Answer otherImage =
          first.exec(
              "other-image", "true", WRITABLE + ", \"image\": \"debian:12\", " + from("root-1"));
      assertThat(otherImage.status()).as(otherImage.body().toString()).isEqualTo(400);
      assertThat(otherImage.errorMessage()).contains("holds a writable root over image");
      assertThat(engine().rootsOf(first)).hasSize(3);
    }
    try (TestServer bwrap = TestServer.startOn(dataDir, Clock.systemUTC())) {
      Answer elsewhere = bwrap.exec("on-bwrap", "true", from("root-1"));
      assertThat(elsewhere.status()).as(elsewhere.body().toString()).isEqualTo(400);
      assertThat(elsewhere.errorMessage())
          .contains("holds the writable root of a " + settings()[1] + " container");
      assertThat(bwrap.delete("/v1/snapshots/root-2").status()).isEqualTo(204);
    }
    try (TestServer second = TestServer.startOn(dataDir, Clock.systemUTC(), settings())) {
      assertThat(engine().rootsOf(second)).hasSize(1);

      Answer again = second.exec("again", "cat /var/tmp/marker", WRITABLE + ", " + from("root-1"));

      assertThat(again.stdout()).as(again.body().toString()).isEqualTo("kept\n");
      assertThat(second.delete("/v1/snapshots/root-1").status()).isEqualTo(204);
      assertThat(second.exec("again", "cat /var/tmp/marker", WRITABLE).stdout())
          .isEqualTo("kept\n");
      assertThat(engine().rootsOf(second)).hasSize(1);
      second.delete("/v1/sessions/again");
      assertThat(engine().rootsOf(second)).isEmpty();
    }
  }

  private static String from(String snapshot) {
    return "\"from_snapshot\": \"" + snapshot + "\"";
  }
}
