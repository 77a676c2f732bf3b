package dev.box.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.box.api.BoxJson;
import dev.box.api.BoxManagedProcessSpec;
import dev.box.api.BoxSessionInfo;
import dev.box.api.BoxSpec;
import dev.box.cli.ServeProcessTest.Server;
import dev.box.client.BoxClient;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real {@code box serve} under a mixed load from several clients (creates, execs, managed
 * processes, deletes), killed with SIGKILL at random moments and started again on the same data
 * dir, round after round. After every kill nothing of it is left running; after every start the
 * server answers, every state record reads, the persistent session is back and every line it was
 * told to keep is in its workspace.
 */
class ChaosTest {
  private static final int ROUNDS = 6;
  private static final int CLIENTS = 3;
  private static final int REFILL_ROUNDS = 6;
  private static final BoxSpec KEEP = BoxSpec.builder("keep").persistent(true).build();

  @TempDir Path dataDir;

  @Test
  void killedAtRandomMoments_itRestartsWithNothingLeftAndNothingLost() throws Exception {
    Random random = new Random(20261126L);
    List<String> committed = new ArrayList<>();
    AtomicInteger operations = new AtomicInteger();
    for (int round = 0; round < ROUNDS; round++) {
      Server server = Server.start(dataDir);
      AtomicBoolean killed = new AtomicBoolean();
      ExecutorService load = Executors.newFixedThreadPool(CLIENTS);
      try (BoxClient client = server.client(dataDir)) {
        assertThat(client.health().available()).isTrue();
        assertRecordsReadable();
        if (round > 0) {
          assertThat(client.sessions().stream().map(BoxSessionInfo::sessionId)).contains("keep");
        }
        String seen =
            client.exec(KEEP.toBuilder().cmd("cat /workspace/log 2>/dev/null").build()).stdout();
        assertThat(seen.lines().toList()).as("round " + round).containsExactlyElementsOf(committed);
        String line = "round-" + round;
        assertThat(
                client
                    .exec(KEEP.toBuilder().cmd("echo " + line + " >> /workspace/log; sync").build())
                    .exitCode())
            .isZero();
        committed.add(line);

        for (int c = 0; c < CLIENTS; c++) {
          long seed = random.nextLong();
          String prefix = "r" + round + "c" + c;
          load.submit(() -> mixedLoad(client, prefix, new Random(seed), killed, operations));
        }
        Thread.sleep(300 + random.nextInt(1500));
      } finally {
        killed.set(true);
        server.process().destroyForcibly(); // SIGKILL: no shutdown hook runs
        server.process().waitFor();
        load.shutdown();
        assertThat(load.awaitTermination(60, TimeUnit.SECONDS)).isTrue();
      }
      // Its sandboxes die with it (--die-with-parent); nothing of this data dir keeps running.
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> ServeProcessTest.hostProcessesContaining(dataDir.toString()).isEmpty());
      assertRecordsReadable();
    }

    assertThat(operations.get()).as("operations the load carried out").isPositive();
    Server last = Server.start(dataDir);
    try (BoxClient client = last.client(dataDir)) {
      // The sweep of the restart removed every cgroup the killed servers left: only the last
      // server's remain (the restored persistent session's, and its pre-started sandboxes').
      assertThat(
              ServeProcessTest.instancesOf(
                  ServeProcessTest.names(ServeProcessTest.cgroupBase(dataDir))))
          .hasSize(1);
      assertThat(client.sessions().stream().map(BoxSessionInfo::sessionId)).containsExactly("keep");
      assertThat(client.exec(KEEP.toBuilder().cmd("cat /workspace/log").build()).stdout().lines())
          .containsExactlyElementsOf(committed);
      client.deleteSession("keep");
    } finally {
      last.process().destroy();
      last.process().waitFor();
    }
    assertThat(ServeProcessTest.hostProcessesContaining(dataDir.toString())).isEmpty();
  }

  /**
   * A session's create takes a pre-started sandbox and the pool at once starts another; a server
   * killed right then, while that sandbox is being forked, takes it along: its parent-death signal
   * is armed before anything of it runs. Round after round, at slightly different moments of the
   * refill, nothing of the data dir keeps running once the server is gone.
   */
  @Test
  void killedRightAfterACreate_whileThePoolRefills_leavesNoSandboxRunning() throws Exception {
    for (int round = 0; round < REFILL_ROUNDS; round++) {
      Server server = Server.start(dataDir);
      try (BoxClient client = server.client(dataDir)) {
        await()
            .atMost(Duration.ofSeconds(30))
            .until(() -> client.health().enforced().getOrDefault("pool", "").startsWith("2 of 2"));
        client.createSession(BoxSpec.builder("refill-" + round).build());
        // Sub-millisecond to a few milliseconds in: somewhere in the refill's fork of the next.
        long spinUntil = System.nanoTime() + round * 1_000_000L;
        while (System.nanoTime() < spinUntil) {
          Thread.onSpinWait();
        }
        server.process().destroyForcibly(); // SIGKILL: no shutdown hook runs
      } finally {
        server.process().destroyForcibly();
        server.process().waitFor();
      }
      // A survivor would be reparented to init and run until the next server sweeps it.
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> ServeProcessTest.hostProcessesContaining(dataDir.toString()).isEmpty());
    }
    // The next start sweeps the cgroups and slot mounts the killed servers left; a clean stop
    // then leaves nothing at all.
    Server last = Server.start(dataDir);
    last.process().destroy();
    last.process().waitFor();
    assertThat(ServeProcessTest.hostProcessesContaining(dataDir.toString())).isEmpty();
  }

  /** Creates, execs in, starts processes in and deletes sessions until the server is killed. */
  private static void mixedLoad(
      BoxClient client,
      String prefix,
      Random random,
      AtomicBoolean killed,
      AtomicInteger operations) {
    int n = 0;
    while (!killed.get()) {
      String session = prefix + "-" + (n++ % 3);
      try {
        switch (random.nextInt(5)) {
          case 0 -> client.createSession(BoxSpec.builder(session).build());
          case 1 ->
              client.exec(BoxSpec.builder(session).cmd("head -c 100000 /dev/zero | wc -c").build());
          case 2 -> client.exec(BoxSpec.builder(session).cmd("sleep 5").timeoutSec(1).build());
          case 3 -> {
            client.createSession(BoxSpec.builder(session).build());
            client.startProcess(session, BoxManagedProcessSpec.of("cat"));
          }
          default -> client.deleteSession(session);
        }
        operations.incrementAndGet();
      } catch (RuntimeException e) {
        // Refusals (a session deleted meanwhile, a process already running) and, once killed,
        // the dropped connection: the load goes on until the kill.
      }
    }
  }

  /** Every persistent-session record in the state dir is whole JSON of the current format. */
  private void assertRecordsReadable() throws IOException {
    Path records = dataDir.resolve(".box-state/sessions");
    if (!Files.isDirectory(records)) {
      return;
    }
    try (DirectoryStream<Path> files = Files.newDirectoryStream(records, "*.json")) {
      for (Path file : files) {
        JsonNode record = BoxJson.newMapper().readTree(Files.readAllBytes(file));
        assertThat(record.path("version").asInt()).as(file.toString()).isEqualTo(1);
        assertThat(record.path("spec").path("persistent").asBoolean()).isTrue();
      }
    }
    assertThat(records.resolve("persistent_keep.json.unreadable")).doesNotExist();
  }
}
