package dev.box.core.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HostPidsTest {

  @Test
  void theInnermostPid_isTheLastOfTheNspidLine() {
    String status =
        "Name:\tsh\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t4242\nPid:\t4242\n"
            + "NStgid:\t4242\t17\nNSpid:\t4242\t17\nNSpgid:\t4242\t1\nThreads:\t1\n";

    assertThat(HostPids.innermostPid(status)).isEqualTo(17);
  }

  @Test
  void aNameThatLooksLikeTheNspidLine_isNotTakenForIt() {
    // The kernel escapes a newline in a process's name; "NSpid:" within the name line is no line.
    String status = "Name:\tNSpid:\t1\nNSpid:\t4242\t9\n";

    assertThat(HostPids.innermostPid(status)).isEqualTo(9);
  }

  @Test
  void aStatusWithoutAnNspidLine_givesMinusOne() {
    assertThat(HostPids.innermostPid("Name:\tsh\nPid:\t1\n")).isEqualTo(-1);
  }

  @Test
  void thisProcess_isItsOwnInnermostPid_inTheHostsNamespace() throws IOException {
    long self = ProcessHandle.current().pid();

    assertThat(HostPids.innermostPid(self)).isEqualTo(self);
  }

  @Test
  void find_takesTheListedPidWhoseInnermostPidMatches_andNeverTheExcludedOne(@TempDir Path dir)
      throws IOException {
    long self = ProcessHandle.current().pid();
    Path procs = dir.resolve("cgroup.procs");
    Files.writeString(procs, "999999999\n" + self + "\n");

    assertThat(HostPids.find(procs, self, -1)).isEqualTo(self);
    assertThatThrownBy(() -> HostPids.find(procs, self, self))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("no process " + self);
  }
}
