package dev.box.testkit;

import dev.box.api.BoxDataDir;
import dev.box.backend.nsjail.NsjailBackend;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

/**
 * The conformance suite against the nsjail backend. Its host-side objects are the {@code nsjail}
 * processes that run a configuration under {@code <state dir>/nsjail/}, the jails' holders (their
 * {@code $0} is {@code box-nsjail-<hash of the state dir>/<sandbox>}), the slirp4netns of
 * network-on jails, and the cgroup directories under {@code box-nsjail-<hash>} in each cgroup v1
 * hierarchy (or the v2 tree).
 */
class NsjailConformanceTest extends BackendConformanceSuite {
  @Override
  protected String backendName() {
    return "nsjail";
  }

  @Override
  protected Set<String> leftovers() {
    Set<String> found = new TreeSet<>();
    List<Path> stateDirs = dataDirs().stream().map(BoxDataDir::stateDir).toList();
    List<String> tags = stateDirs.stream().map(NsjailBackend::tagOf).toList();
    List<String> jails = stateDirs.stream().map(d -> d.resolve("nsjail") + "/").toList();
    Set<Long> ourJails = new java.util.HashSet<>();
    ProcessHandle.allProcesses()
        .forEach(
            h -> {
              List<String> argv = commandLine(h.pid());
              for (String arg : argv) {
                if (tags.stream().anyMatch(t -> arg.startsWith(t + "/"))) {
                  found.add("holder pid " + h.pid() + " " + arg);
                  ourJails.add(h.pid());
                } else if (!argv.isEmpty()
                    && argv.get(0).endsWith("/nsjail")
                    && jails.stream().anyMatch(arg::startsWith)) {
                  found.add("nsjail pid " + h.pid() + " " + arg);
                }
              }
            });
    ProcessHandle.allProcesses()
        .filter(h -> h.info().command().map(c -> c.endsWith("/slirp4netns")).orElse(false))
        .forEach(
            h -> {
              List<String> args = h.info().arguments().map(List::of).orElse(List.of());
              if (args.size() < 2) {
                return;
              }
              try {
                long target = Long.parseLong(args.get(args.size() - 2));
                if (ProcessHandle.of(target).isEmpty() || ourJails.contains(target)) {
                  found.add("slirp4netns pid " + h.pid() + " for " + target);
                }
              } catch (NumberFormatException e) {
                // Not one of ours.
              }
            });
    SandboxCgroups.addLeftovers(tags, found);
    return found;
  }

  /** Kills the jail's nsjail process, as an operator or the OOM killer might. */
  @Override
  protected void killSandboxFromOutside(String backendSessionId) {
    ProcessHandle.allProcesses()
        .filter(
            h -> {
              List<String> argv = commandLine(h.pid());
              return !argv.isEmpty()
                  && argv.get(0).endsWith("/nsjail")
                  && argv.stream().anyMatch(a -> a.endsWith("/" + backendSessionId + ".cfg"));
            })
        .forEach(
            h -> {
              h.destroyForcibly();
              try {
                h.onExit().get(10, TimeUnit.SECONDS);
              } catch (Exception e) {
                throw new AssertionError("nsjail pid " + h.pid() + " did not die", e);
              }
            });
  }

  private static List<String> commandLine(long pid) {
    try {
      String text =
          new String(
              Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline")),
              StandardCharsets.UTF_8);
      return text.isEmpty() ? List.of() : List.of(text.split("\0"));
    } catch (IOException e) {
      return List.of();
    }
  }
}
