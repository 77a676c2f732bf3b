package dev.box.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.box.api.BoxDataDir;
import dev.box.core.Hashes;
import dev.box.testclient.Answer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The conformance suite against a container engine. The backend's host-side objects are the
 * containers labelled {@code langbot.box=true} whose {@code dev.box.data} label is the hash of the
 * state directory of one of the suite's data directories; they are listed and killed with the
 * engine's own CLI, beside Box rather than through it. The engines and the image come from {@code
 * scripts/engines up}.
 */
abstract class ContainerConformance extends BackendConformanceSuite {
  @Override
  protected boolean adoptsAfterACrash() {
    return true;
  }

  /**
   * The command's shell was forked by the container's exec agent, as the sandbox user, in a cgroup
   * of its own below the container's.
   */
  @Test
  void processesStartThroughTheExecAgent_inACgroupOfTheirOwn() {
    Answer a =
        box()
            .exec(
                session("agent"),
                "tr '\\000' ' ' < /proc/$PPID/cmdline; echo; id -u;"
                    + " grep -c box-exec- /proc/self/cgroup",
                "");

    assertThat(a.stdout()).isEqualTo("/.box/box-agent /.box/agent/socket \n1000\n1\n");
  }

  /** The engine's CLI, which this test uses to look behind Box's back. */
  private String cli() {
    return "/usr/bin/" + backendName();
  }

  @Override
  protected Set<String> leftovers() {
    Set<String> found = new TreeSet<>();
    for (Path dataDir : dataDirs()) {
      String label = Hashes.shortSha256(BoxDataDir.stateDir(dataDir).toString());
      for (String name :
          run(
              List.of(
                  cli(),
                  "ps",
                  "-a",
                  "--filter",
                  "label=langbot.box=true",
                  "--filter",
                  "label=dev.box.data=" + label,
                  "--format",
                  "{{.Names}}"))) {
        if (!idlePooled(name)) {
          found.add("container " + name);
        }
      }
    }
    return found;
  }

  /**
   * Whether the pre-started container {@code name} is idle, nothing mounted at the slot it binds at
   * /workspace: a live server keeps up to {@code pool_size} of them and starts one after each take,
   * so they are not a session's leftovers. A taken one counts like any other container; closing a
   * backend removes its idle ones (tested by the backend's own pool test).
   */
  private boolean idlePooled(String name) {
    if (!name.contains("_pool-")) {
      return false;
    }
    // Docker's and Podman's ps format labels differently; their inspect formats agree.
    List<String> slot;
    try {
      slot =
          run(
              List.of(
                  cli(),
                  "inspect",
                  "--format",
                  "{{if index .Config.Labels \"dev.box.pool\"}}{{range .Mounts}}"
                      + "{{if eq .Destination \"/workspace\"}}{{.Source}}{{end}}{{end}}{{end}}",
                  name));
    } catch (AssertionError e) {
      return true; // removed since ps listed it: not left behind
    }
    if (slot.isEmpty()) {
      return false;
    }
    try {
      String source = slot.get(0);
      return Files.readAllLines(Path.of("/proc/self/mountinfo")).stream()
          .noneMatch(line -> line.split(" ")[4].equals(source));
    } catch (IOException e) {
      return false;
    }
  }

  @Override
  protected void killSandboxFromOutside(String backendSessionId) {
    run(List.of(cli(), "kill", backendSessionId));
  }

  private static List<String> run(List<String> command) {
    try {
      ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
      builder
          .environment()
          .put("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
      Process process = builder.start();
      String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
        throw new AssertionError(String.join(" ", command) + " failed: " + output);
      }
      List<String> lines = new ArrayList<>();
      output.lines().map(String::strip).filter(l -> !l.isEmpty()).forEach(lines::add);
      return lines;
    } catch (IOException e) {
      throw new AssertionError("cannot run " + command, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted", e);
    }
  }
}
