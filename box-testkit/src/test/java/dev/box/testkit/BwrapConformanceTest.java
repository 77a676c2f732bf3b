package dev.box.testkit;

import dev.box.core.Hashes;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The conformance suite against the bubblewrap backend. Its host-side objects are the {@code bwrap}
 * processes whose command line carries the {@code box-<hash of the data dir>/<sandbox>} tag, and
 * the cgroup directories under {@code box-<hash>} in each cgroup v1 hierarchy (or the v2 tree).
 */
class BwrapConformanceTest extends NamespaceConformance {
  BwrapConformanceTest() {
    super("bwrap", stateDir -> "box-" + Hashes.shortSha256(stateDir.toString()));
  }

  @Override
  protected void addProcessLeftovers(List<Path> stateDirs, List<String> tags, Set<String> found) {
    ProcessHandle.allProcesses()
        .forEach(
            h -> {
              for (String arg : bwrapArguments(h)) {
                if (tags.stream().anyMatch(t -> arg.startsWith(t + "/"))) {
                  found.add("bwrap pid " + h.pid() + " " + arg);
                }
              }
            });
    SandboxProcesses.forEachSlirp(
        (slirp, target) -> slirpLeftover(slirp, target, tags).ifPresent(found::add));
  }

  /**
   * A slirp4netns process (network-on sandboxes) counts when the namespace it serves belongs to a
   * sandbox of the suite (named by that sandbox's bwrap tag), or when that namespace's process is
   * gone: then nothing will ever stop it but its own exit.
   */
  private static Optional<String> slirpLeftover(
      ProcessHandle slirp, long target, List<String> tags) {
    Optional<ProcessHandle> init = ProcessHandle.of(target);
    if (init.isEmpty()) {
      return Optional.of("slirp4netns pid " + slirp.pid() + " serving a namespace that is gone");
    }
    return init.flatMap(ProcessHandle::parent).stream()
        .flatMap(bwrap -> bwrapArguments(bwrap).stream())
        .filter(arg -> tags.stream().anyMatch(t -> arg.startsWith(t + "/")))
        .findFirst()
        .map(arg -> "slirp4netns pid " + slirp.pid() + " " + arg);
  }

  @Override
  protected void killSandboxFromOutside(String backendSessionId) {
    SandboxProcesses.killFromOutside(
        h -> bwrapArguments(h).stream().anyMatch(a -> a.endsWith("/" + backendSessionId)), "bwrap");
  }

  private static List<String> bwrapArguments(ProcessHandle h) {
    Optional<String> command = h.info().command();
    if (command.isEmpty() || !command.get().endsWith("/bwrap")) {
      return List.of();
    }
    return h.info().arguments().map(List::of).orElse(List.of());
  }
}
