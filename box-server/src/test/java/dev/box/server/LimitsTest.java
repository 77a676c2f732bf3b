package dev.box.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.box.testclient.Answer;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/** The session limits are enforced, not only accepted: each test has a control that succeeds. */
class LimitsTest {
  @AutoClose private static final TestServer box = TestServer.start();

  @Test
  void healthReportsTheLimitsItEnforces() {
    Answer health = box.get("/v1/health");

    assertThat(health.body().path("available").asBoolean()).isTrue();
    assertThat(health.body().path("enforced").path("memory").asText()).startsWith("cgroup");
    assertThat(health.body().path("enforced").path("pids").asText()).startsWith("cgroup");
    assertThat(health.body().path("enforced").path("cpu").asText()).startsWith("cgroup");
  }

  @Test
  void memoryLimit_killsAProcessThatOutgrowsIt() {
    // tail buffers a whole line: 200 MB without a newline needs 200 MB of memory.
    String grow = "head -c %d /dev/zero | tail -n 1 | wc -c";

    Answer small = box.exec("mem", grow.formatted(20_000_000), "\"memory_mb\":64");
    Answer big = box.exec("mem", grow.formatted(200_000_000), "\"memory_mb\":64");

    assertThat(small.text("stdout").strip()).isEqualTo("20000000");
    assertThat(big.text("stdout").strip()).isEqualTo("0");
  }

  @Test
  void memoryLimit_countsFilesWrittenToTmp() {
    Answer a =
        box.exec(
            "mem-tmp", "head -c 150000000 /dev/zero > /tmp/big; echo rc=$?", "\"memory_mb\":64");

    assertThat(a.text("stdout")).isNotEqualTo("rc=0\n");
  }

  @Test
  void pidsLimit_refusesForksBeyondIt() {
    String fork = "for i in $(seq 1 40); do sleep 2 & done; wait; echo finished";

    Answer within = box.exec("pids-ok", fork, "\"pids_limit\":128");
    Answer beyond = box.exec("pids-low", fork, "\"pids_limit\":16");

    assertThat(within.text("stderr")).isEmpty();
    assertThat(within.text("stdout")).isEqualTo("finished\n");
    assertThat(beyond.text("stderr")).containsIgnoringCase("fork");
  }

  @Test
  void cpuLimit_throttlesABusyLoop() {
    // A busy loop for 2 s of wall time, then its own CPU time in clock ticks (100 per second).
    String busy =
        "sh -c 'while :; do :; done' & p=$!; sleep 2;"
            + " t=$(cut -d' ' -f14 /proc/$p/stat); kill $p; echo $t";

    Answer limited = box.exec("cpu-low", busy, "\"cpus\":0.2");

    // At 0.2 cpus the loop gets about 40 ticks in 2 s; unthrottled it would take up to 200.
    assertThat(Integer.parseInt(limited.text("stdout").strip())).isBetween(1, 70);
  }
}
