package dev.box.sandbox;

import dev.box.api.BoxCapabilities;
import dev.box.api.time.Ticker;
import dev.box.core.backend.BackendStatus;
import dev.box.core.net.NetnsFirewall;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the namespace backends (bubblewrap, nsjail) find out about the host in the same way: its
 * cgroups, whether network-on sandboxes can be kept off it, whether this server runs as root, and
 * how each limit is enforced.
 */
public final class NamespaceHost {
  private static final Logger log = LoggerFactory.getLogger(NamespaceHost.class);

  private NamespaceHost() {}

  /**
   * The cgroup driver of the host's writable hierarchy, v2 before v1, or one that enforces nothing.
   *
   * @param baseName the base cgroup of this data directory's sandboxes
   * @param ticker the clock of the waits for the kernel to empty a cgroup
   */
  public static CgroupDriver probeCgroups(String baseName, Ticker ticker) {
    CgroupLayout layout = CgroupLayout.current();
    CgroupFiles files = CgroupFiles.kernel(ticker);
    CgroupDriver v2 = CgroupV2Driver.probe(layout, baseName, files);
    if (v2 != null) {
      return v2;
    }
    CgroupDriver v1 = CgroupV1Driver.probe(layout, baseName, files);
    if (v1 != null) {
      return v1;
    }
    log.warn(
        "no writable cgroup hierarchy: memory is limited per process by rlimit only; pids and cpu"
            + " limits are NOT enforced");
    return new NoCgroupDriver();
  }

  /**
   * How each limit is enforced: the cgroups', then the timeout, output, egress, seccomp, the
   * sandbox uid, and what bounds the tmpfs mounts and a writable root.
   */
  public static Map<String, String> enforced(
      CgroupDriver cgroups, String egress, String seccomp, int sandboxUid) {
    Map<String, String> enforced = new LinkedHashMap<>(cgroups.enforced());
    enforced.put("timeout", "kill");
    enforced.put("output", "bounded");
    enforced.put("egress", egress);
    enforced.put("seccomp", seccomp);
    enforced.put("sandbox_uid", Integer.toString(sandboxUid));
    // /tmp, /home, /dev/shm and a writable root are tmpfs: their pages count in the memory cgroup,
    // and nothing bounds them without one (an rlimit does not see tmpfs pages).
    String memory = enforced.getOrDefault("memory", "none");
    String inMemory =
        memory.startsWith("cgroup")
            ? "tmpfs, counted in the memory limit (" + memory + ")"
            : "none: tmpfs without a memory cgroup";
    enforced.put("tmp", inMemory);
    enforced.put("writable_root", inMemory);
    return enforced;
  }

  /** How network-on sandboxes are kept off the host: {@code nftables}, or {@code none: why}. */
  public static String networkStatus(@Nullable Path slirp4netns, NetnsFirewall firewall) {
    if (slirp4netns == null) {
      return "none: slirp4netns not found (apt-get install slirp4netns); network on is refused";
    }
    if (!firewall.available()) {
      return firewall.status() + "; network on is refused";
    }
    return firewall.status();
  }

  /**
   * Why the host cannot run a namespace backend's sandboxes, or null when it can: the backend needs
   * nsenter and setpriv, and root.
   *
   * @param utilLinux whether nsenter and setpriv were found
   * @param backend the backend, as its message names it
   * @param sandboxes what the backend's sandboxes are called, as its message names them
   */
  public static @Nullable String unmet(boolean utilLinux, String backend, String sandboxes) {
    if (!utilLinux) {
      return "nsenter or setpriv not found (util-linux)";
    }
    if (!runsAsRoot()) {
      return "the "
          + backend
          + " backend needs root, to map the sandbox user onto an unprivileged uid and to enter "
          + sandboxes
          + " (run box serve as root, or use docker or podman)";
    }
    return null;
  }

  /** A trial run of a backend's jail on this host. */
  @FunctionalInterface
  public interface Trial {
    /** Makes a throwaway sandbox: null when it could, else why not. */
    @Nullable String run() throws IOException, InterruptedException;
  }

  /**
   * The status of a namespace backend whose host has what it needs: available, described by {@code
   * description}, when {@code trial} makes a sandbox; unavailable otherwise.
   *
   * @param name the backend's name
   * @param tool the tool that makes its sandboxes, as the messages name it
   */
  public static BackendStatus tryOut(
      String name, String tool, String description, Map<String, String> enforced, Trial trial) {
    try {
      String failed = trial.run();
      if (failed != null) {
        return new BackendStatus(name, false, failed, enforced);
      }
    } catch (IOException e) {
      return new BackendStatus(name, false, tool + " failed to start: " + e.getMessage(), enforced);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new BackendStatus(name, false, "interrupted while probing " + tool, enforced);
    }
    return new BackendStatus(
        name,
        true,
        description,
        enforced,
        Set.of(
            BoxCapabilities.HOST_PATHS,
            BoxCapabilities.READ_ONLY_ROOTFS,
            BoxCapabilities.PROCESS_MEMORY_LIMIT));
  }

  /** Whether this process runs as root (effective uid 0), read from /proc/self/status. */
  public static boolean runsAsRoot() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
        if (line.startsWith("Uid:")) {
          return line.split("\\s+")[2].equals("0");
        }
      }
    } catch (IOException e) {
      log.warn("cannot read this process's uid: {}", e.toString());
    }
    return false;
  }

  /** {@code text} on one line, at most 300 characters: for an error message. */
  public static String oneLine(String text) {
    String line = text.strip().replaceAll("\\s+", " ");
    return line.length() > 300 ? line.substring(0, 300) : line;
  }
}
