package dev.box.testkit;

import dev.box.backend.nsjail.NsjailBackend;
import dev.box.testclient.HostProcesses;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

/**
 * The conformance suite against the nsjail backend. Its host-side objects are the {@code nsjail}
 * processes that run a configuration under {@code <state dir>/nsjail/}, the jails' holders (their
 * {@code $0} is {@code box-nsjail-<hash of the state dir>/<sandbox>}), the slirp4netns of
 * network-on jails, and the cgroup directories under {@code box-nsjail-<hash>} in each cgroup v1
 * hierarchy (or the v2 tree).
 */
class NsjailConformanceTest extends NamespaceConformance {
  NsjailConformanceTest() {
    super("nsjail", NsjailBackend::tagOf);
  }

  @Override
  protected void addProcessLeftovers(List<Path> stateDirs, List<String> tags, Set<String> found) {
    List<String> jails = stateDirs.stream().map(d -> d.resolve("nsjail") + "/").toList();
    Set<Long> ourJails = new java.util.HashSet<>();
    ProcessHandle.allProcesses()
        .forEach(
            h -> {
              List<String> argv = HostProcesses.commandLine(h.pid());
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
    SandboxProcesses.forEachSlirp(
        (slirp, target) -> {
          if (ProcessHandle.of(target).isEmpty() || ourJails.contains(target)) {
            found.add("slirp4netns pid " + slirp.pid() + " for " + target);
          }
        });
  }

  /**
   * A pre-started jail is idle while its slot is there: a taken one's is the session's workspace.
   */
  @Override
  protected boolean idle(String name, String instance, List<Path> stateDirs) {
    return stateDirs.stream()
        .anyMatch(d -> Files.isDirectory(d.resolve("nsjail-pool").resolve(instance).resolve(name)));
  }

  /** Kills the jail's nsjail process, as an operator or the OOM killer might. */
  @Override
  protected void killSandboxFromOutside(String backendSessionId) {
    SandboxProcesses.killFromOutside(
        h -> {
          List<String> argv = HostProcesses.commandLine(h.pid());
          return !argv.isEmpty()
              && argv.get(0).endsWith("/nsjail")
              && argv.stream().anyMatch(a -> a.endsWith("/" + backendSessionId + ".cfg"));
        },
        "nsjail");
  }
}
