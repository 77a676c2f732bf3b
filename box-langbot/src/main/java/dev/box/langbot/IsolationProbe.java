package dev.box.langbot;

import dev.box.api.BoxExecutionResult;
import dev.box.api.BoxSpec;
import dev.box.api.internal.ShellScript;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The strict isolation probe of grant-enforced mode, run in a real sandbox of the backend in use: a
 * throwaway network-off session reports its namespaces, whether a host path it must not see is
 * visible, and its network interfaces, and each is compared with the host's. A check holds only
 * when the sandbox proved it; any failure of the probe fails them all.
 *
 * @param exec runs one exec through the runtime (a session is created for it)
 * @param delete deletes the probe's session
 * @param hidden a host path no sandbox may see (the runtime's state dir)
 */
record IsolationProbe(
    Function<BoxSpec, BoxExecutionResult> exec, Consumer<String> delete, Path hidden) {
  private static final Logger log = LoggerFactory.getLogger(IsolationProbe.class);
  private static final List<String> NAMESPACES = List.of("pid", "user", "mnt", "net");

  /**
   * A fixed script, isolation-probe.sh beside this class: no part of a request reaches it; the
   * hidden path comes through the env.
   */
  private static final String SCRIPT = ShellScript.load(IsolationProbe.class, "isolation-probe.sh");

  /** What the probe proved. */
  record Result(boolean namespaces, boolean mounts, boolean network, String detail) {
    static final Result FAILED = new Result(false, false, false, "the probe did not run");
  }

  /** Runs the probe; never throws. */
  Result run() {
    String session = "box-isolation-probe-" + UUID.randomUUID();
    try {
      BoxExecutionResult result =
          exec.apply(
              BoxSpec.builder(session)
                  .cmd(SCRIPT)
                  .env("BOX_PROBE_HIDDEN", hidden.toString())
                  .build());
      if (result.exitCode() == null || result.exitCode() != 0) {
        return new Result(false, false, false, "the probe failed: " + result.stderr().strip());
      }
      Map<String, String> seen = new HashMap<>();
      for (String line : result.stdout().lines().toList()) {
        int eq = line.indexOf('=');
        if (eq > 0) {
          seen.put(line.substring(0, eq), line.substring(eq + 1).strip());
        }
      }
      boolean namespaces = true;
      for (String ns : NAMESPACES) {
        String host = Files.readSymbolicLink(Path.of("/proc/self/ns", ns)).toString();
        namespaces &= !host.equals(seen.get(ns)) && seen.getOrDefault(ns, "").startsWith(ns);
      }
      boolean mounts = namespaces && "absent".equals(seen.get("hidden"));
      boolean network = "lo".equals(seen.get("ifaces"));
      return new Result(namespaces, mounts, network, result.stdout().strip());
    } catch (IOException | RuntimeException e) {
      log.warn("the isolation probe failed: {}", e.toString());
      return Result.FAILED;
    } finally {
      try {
        delete.accept(session);
      } catch (RuntimeException e) {
        log.debug("the isolation probe's session was gone: {}", e.toString());
      }
    }
  }
}
