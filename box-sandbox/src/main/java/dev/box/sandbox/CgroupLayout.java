package dev.box.sandbox;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Where this process's cgroups are: the mount point of each hierarchy (from /proc/self/mounts)
 * joined with this process's path in it (from /proc/self/cgroup).
 */
public final class CgroupLayout {
  /**
   * The controllers the drivers limit with. The unified hierarchy is used when none of them is
   * bound to a v1 one; a named v1 hierarchy without controllers (name=systemd) does not count.
   */
  private static final List<String> DRIVER_CONTROLLERS = List.of("memory", "pids", "cpu");

  private final Map<String, Path> v1;
  private final @Nullable Path v2;

  private CgroupLayout(Map<String, Path> v1, @Nullable Path v2) {
    this.v1 = v1;
    this.v2 = v2;
  }

  /** Reads the layout of the running process. */
  public static CgroupLayout current() {
    try {
      return parse(
          Files.readAllLines(Path.of("/proc/self/mounts")),
          Files.readAllLines(Path.of("/proc/self/cgroup")));
    } catch (IOException e) {
      return new CgroupLayout(Map.of(), null);
    }
  }

  static CgroupLayout parse(List<String> mounts, List<String> cgroups) {
    Map<String, Path> v1Mounts = new HashMap<>();
    Path v2Mount = null;
    for (String line : mounts) {
      String[] f = line.split(" ");
      if (f.length < 4) {
        continue;
      }
      if (f[2].equals("cgroup2")) {
        v2Mount = Path.of(f[1]);
      } else if (f[2].equals("cgroup")) {
        for (String option : f[3].split(",")) {
          v1Mounts.put(option, Path.of(f[1]));
        }
      }
    }
    Map<String, Path> v1 = new HashMap<>();
    Path v2 = null;
    for (String line : cgroups) {
      String[] f = line.split(":", 3);
      if (f.length < 3) {
        continue;
      }
      String relative = f[2].startsWith("/") ? f[2].substring(1) : f[2];
      if (f[1].isEmpty()) {
        if (v2Mount != null && DRIVER_CONTROLLERS.stream().noneMatch(v1Mounts::containsKey)) {
          v2 = v2Mount.resolve(relative);
        }
        continue;
      }
      for (String controller : f[1].split(",")) {
        Path mount = v1Mounts.get(controller);
        if (mount != null) {
          v1.put(controller, mount.resolve(relative));
        }
      }
    }
    return new CgroupLayout(v1, v2);
  }

  /** This process's directory in the v1 hierarchy of {@code controller}, if mounted. */
  @Nullable Path v1Dir(String controller) {
    return v1.get(controller);
  }

  /**
   * This process's directory in the unified hierarchy, if the memory, pids and cpu controllers are
   * not on v1 hierarchies.
   */
  @Nullable Path v2Dir() {
    return v2;
  }
}
