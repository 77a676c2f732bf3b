package dev.box.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.box.api.BoxDataDir;
import dev.box.testclient.Answer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The conformance suite against a namespace backend (bubblewrap, nsjail). The backend's host-side
 * objects are its processes, which the subclass finds by the tags of the suite's state directories,
 * and the cgroup directories under those tags in each cgroup v1 hierarchy (or the v2 tree).
 */
abstract class NamespaceConformance extends BackendConformanceSuite {
  private final String backend;
  private final Function<Path, String> tagOf;

  /**
   * @param backend the backend's name
   * @param tagOf the tag the backend gives the sandboxes of a state directory
   */
  NamespaceConformance(String backend, Function<Path, String> tagOf) {
    this.backend = backend;
    this.tagOf = tagOf;
  }

  @Override
  protected final String backendName() {
    return backend;
  }

  /**
   * Adds to {@code found} the backend's host processes that belong to the state directories {@code
   * stateDirs}, whose tags are {@code tags}.
   */
  protected abstract void addProcessLeftovers(
      List<Path> stateDirs, List<String> tags, Set<String> found);

  /** The sandbox's PID 1 is the exec agent, which started the command, as the sandbox user. */
  @Test
  void processesStartThroughTheExecAgent_theSandboxsPid1() {
    Answer a =
        box()
            .exec(
                session("agent"),
                "tr '\\000' ' ' < /proc/1/cmdline; echo; ps -o ppid= -p $$ | tr -d ' '; id -u",
                "");

    // On bwrap the agent is the sandbox's first process and makes the home (--home).
    assertThat(a.stdout())
        .matches("/\\.box/box-agent (--home /home/box )?/\\.box/agent/socket \n1\n1000\n");
  }

  @Override
  protected final Set<String> leftovers() {
    Set<String> found = new TreeSet<>();
    List<Path> stateDirs = dataDirs().stream().map(BoxDataDir::stateDir).toList();
    List<String> tags = stateDirs.stream().map(tagOf).toList();
    addProcessLeftovers(stateDirs, tags, found);
    SandboxCgroups.addLeftovers(tags, found);
    found.removeIf(leftover -> idlePooled(leftover, stateDirs));
    return found;
  }

  /**
   * Whether the pre-started sandbox {@code name} of the instance {@code instance} is still idle:
   * for bubblewrap, nothing is mounted at its slot (a taken one has the session's workspace there).
   */
  protected boolean idle(String name, String instance, List<Path> stateDirs) {
    String slot = "/bwrap-pool/" + instance + "/slots/" + name;
    try {
      return Files.readAllLines(Path.of("/proc/self/mountinfo")).stream()
          .noneMatch(line -> line.split(" ")[4].endsWith(slot));
    } catch (IOException e) {
      return false;
    }
  }

  /**
   * Whether {@code leftover} belongs to a sandbox the backend pre-started and that no session has
   * taken: a live server keeps up to {@code pool_size} of them, and starts one after each take, so
   * they are not a session's leftovers. A taken one counts like any other sandbox. Closing a
   * backend destroys its idle ones (tested by the backend's own pool test).
   */
  private boolean idlePooled(String leftover, List<Path> stateDirs) {
    Matcher m = POOLED.matcher(leftover);
    return m.find() && idle(m.group(0), m.group(1), stateDirs);
  }

  /** The name of a pre-started sandbox, {@code <instance>_pool-<n>}. */
  private static final Pattern POOLED = Pattern.compile("([0-9a-f]+)_pool-[0-9]+");
}
