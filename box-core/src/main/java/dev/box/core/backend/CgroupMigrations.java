package dev.box.core.backend;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes moving a process into a cgroup cheap while the server runs, by holding a cgroup hierarchy
 * mounted with the kernel's {@code favordynmods} option.
 *
 * <p>Every exec moves the process the agent forked into a cgroup of its own, and every sandbox
 * start moves its init into the sandbox's. By default the kernel makes such a move wait for an RCU
 * grace period whenever none happened lately (the lock that guards forks against moves is per-CPU
 * and switching it to its writer's mode costs a grace period): measured here, 5 to 15 ms for an
 * exec in a session that has been idle, against 0.3 ms right after another move. {@code
 * favordynmods} keeps that lock in the writer-friendly mode for as long as a hierarchy mounted with
 * it exists, at the price of slightly dearer forks and exits on the whole host. The lock is the
 * kernel's, shared by every hierarchy, so an empty named cgroup-v1 hierarchy of Box's own ({@code
 * name=box-dynmods}, no controller, at {@link #HOST_MOUNT}) is enough: nothing of the host's own
 * cgroup mounts changes. It is a host setting, like a sysctl: one mount for every server on the
 * host, left in place when a server stops (a server that stops cannot know whether another still
 * runs) and gone at reboot ({@code /run} is a tmpfs); {@code umount /run/box/cgroup-dynmods} gives
 * the kernel its default back.
 *
 * <p>It needs root and a kernel that knows the option (6.0 or later); elsewhere nothing happens,
 * and the reason is logged.
 */
public final class CgroupMigrations {
  /** Where the server mounts the hierarchy. */
  public static final Path HOST_MOUNT = Path.of("/run/box/cgroup-dynmods");

  private static final Logger log = LoggerFactory.getLogger(CgroupMigrations.class);
  private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(10);
  private static final String OPTIONS = "none,name=box-dynmods,favordynmods";

  private final boolean active;
  private final String state;

  private CgroupMigrations(boolean active, String state) {
    this.active = active;
    this.state = state;
  }

  /**
   * Mounts the hierarchy at {@code mountPoint} (created when missing; one mounted already, by an
   * earlier or another server, is used as it is), or does nothing when {@code enabled} is false or
   * it cannot be mounted.
   */
  public static CgroupMigrations favorMoves(Path mountPoint, boolean enabled) {
    Path point = mountPoint.toAbsolutePath().normalize();
    if (!enabled) {
      try {
        if (mounted(point)) {
          return new CgroupMigrations(
              true, "favordynmods (cgroup_favordynmods false, but held at " + point + ")");
        }
      } catch (IOException e) {
        // Then nothing is known to hold it.
      }
      return new CgroupMigrations(false, "kernel default (cgroup_favordynmods false)");
    }
    try {
      if (!mounted(point)) {
        Files.createDirectories(point);
        HostCommand.run(
            List.of("mount", "-t", "cgroup", "-o", OPTIONS, "box-dynmods", point.toString()),
            "",
            COMMAND_TIMEOUT);
      }
      log.debug("cgroup moves favoured: a favordynmods hierarchy is mounted at {}", point);
      return new CgroupMigrations(true, "favordynmods (name=box-dynmods at " + point + ")");
    } catch (IOException e) {
      String why = oneLine(e.getMessage());
      log.info("cgroup moves keep the kernel's default cost: {}", why);
      return new CgroupMigrations(false, "kernel default: " + why);
    }
  }

  /** Whether a hierarchy mounted with favordynmods is held; what is held, or why not. */
  public String state() {
    return state;
  }

  /** Whether a hierarchy mounted with favordynmods is in place. */
  public boolean active() {
    return active;
  }

  /**
   * Whether a cgroup file system with favordynmods is mounted at {@code point} in this mount
   * namespace.
   */
  static boolean mounted(Path point) throws IOException {
    for (String line :
        Files.readAllLines(Path.of("/proc/self/mounts"), StandardCharsets.ISO_8859_1)) {
      String[] f = line.split(" ");
      String escaped = point.toString().replace("\\", "\\134").replace(" ", "\\040");
      if (f.length > 3
          && f[2].equals("cgroup")
          && f[1].equals(escaped)
          && List.of(f[3].split(",")).contains("favordynmods")) {
        return true;
      }
    }
    return false;
  }

  private static String oneLine(@Nullable String text) {
    return text == null ? "" : text.strip().replaceAll("\\s+", " ");
  }
}
