package dev.box.testkit;

import dev.box.api.BoxDataDir;
import dev.box.core.Hashes;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

/**
 * The conformance suite against the bubblewrap backend. Its host-side objects are the {@code bwrap}
 * processes whose command line carries the {@code box-<hash of the data dir>/<sandbox>} tag, and
 * the cgroup directories under {@code box-<hash>} in each cgroup v1 hierarchy (or the v2 tree).
 */
class BwrapConformanceTest extends BackendConformanceSuite {
  @Override
  protected String backendName() {
    return "bwrap";
  }

  @Override
  protected Set<String> leftovers() {
    Set<String> found = new TreeSet<>();
    List<String> tags =
        dataDirs().stream()
            .map(d -> "box-" + Hashes.shortSha256(BoxDataDir.stateDir(d).toString()))
            .toList();
    ProcessHandle.allProcesses()
        .forEach(
            h -> {
              for (String arg : bwrapArguments(h)) {
                if (tags.stream().anyMatch(t -> arg.startsWith(t + "/"))) {
                  found.add("bwrap pid " + h.pid() + " " + arg);
                }
              }
            });
    ProcessHandle.allProcesses()
        .filter(h -> h.info().command().map(c -> c.endsWith("/slirp4netns")).orElse(false))
        .forEach(h -> slirpLeftover(h, tags).ifPresent(found::add));
    SandboxCgroups.addLeftovers(tags, found);
    return found;
  }

  /**
   * A slirp4netns process (network-on sandboxes) counts when the namespace it serves belongs to a
   * sandbox of the suite (named by that sandbox's bwrap tag), or when that namespace's process is
   * gone: then nothing will ever stop it but its own exit.
   */
  private static Optional<String> slirpLeftover(ProcessHandle slirp, List<String> tags) {
    List<String> args = slirp.info().arguments().map(List::of).orElse(List.of());
    if (args.size() < 2) {
      return Optional.empty();
    }
    long target;
    try {
      target = Long.parseLong(args.get(args.size() - 2));
    } catch (NumberFormatException e) {
      return Optional.empty();
    }
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
    ProcessHandle.allProcesses()
        .filter(h -> bwrapArguments(h).stream().anyMatch(a -> a.endsWith("/" + backendSessionId)))
        .forEach(
            h -> {
              h.destroyForcibly();
              try {
                h.onExit().get(10, TimeUnit.SECONDS);
              } catch (Exception e) {
                throw new AssertionError("bwrap pid " + h.pid() + " did not die", e);
              }
            });
  }

  private static List<String> bwrapArguments(ProcessHandle h) {
    Optional<String> command = h.info().command();
    if (command.isEmpty() || !command.get().endsWith("/bwrap")) {
      return List.of();
    }
    return h.info().arguments().map(List::of).orElse(List.of());
  }
}
