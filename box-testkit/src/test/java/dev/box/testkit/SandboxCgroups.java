package dev.box.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

/** The cgroups the namespace backends (bubblewrap, nsjail) leave behind, for their leftovers. */
final class SandboxCgroups {
  private static final List<String> CONTROLLERS = List.of("pids", "memory", "cpu", "freezer");

  private SandboxCgroups() {}

  /**
   * Adds to {@code found} every sandbox cgroup under a base cgroup named by one of {@code tags},
   * but the probes'.
   */
  static void addLeftovers(List<String> tags, Set<String> found) {
    for (Path base : cgroupDirs()) {
      for (String tag : tags) {
        Path dir = base.resolve(tag);
        if (Files.isDirectory(dir)) {
          try (Stream<Path> children = Files.list(dir)) {
            children
                .filter(Files::isDirectory)
                .filter(p -> !p.getFileName().toString().startsWith("probe-"))
                .forEach(p -> found.add("cgroup " + p));
          } catch (IOException e) {
            // Removed while we looked.
          }
        }
      }
    }
  }

  /**
   * This process's cgroup directory in each hierarchy where the backend creates its own: the mount
   * point from /proc/self/mounts joined with this process's path from /proc/self/cgroup.
   */
  private static List<Path> cgroupDirs() {
    try {
      Map<String, Path> mounts = new HashMap<>();
      for (String line : Files.readAllLines(Path.of("/proc/self/mounts"))) {
        String[] f = line.split(" ");
        if (f.length >= 4 && f[2].equals("cgroup")) {
          for (String option : f[3].split(",")) {
            mounts.put(option, Path.of(f[1]));
          }
        } else if (f.length >= 4 && f[2].equals("cgroup2")) {
          mounts.put("", Path.of(f[1]));
        }
      }
      List<Path> dirs = new ArrayList<>();
      for (String line : Files.readAllLines(Path.of("/proc/self/cgroup"))) {
        String[] f = line.split(":", 3);
        if (f.length < 3) {
          continue;
        }
        String relative = f[2].startsWith("/") ? f[2].substring(1) : f[2];
        for (String controller : f[1].isEmpty() ? List.of("") : List.of(f[1].split(","))) {
          Path mount = mounts.get(controller);
          if (mount != null && (controller.isEmpty() || CONTROLLERS.contains(controller))) {
            dirs.add(mount.resolve(relative));
          }
        }
      }
      return dirs;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
