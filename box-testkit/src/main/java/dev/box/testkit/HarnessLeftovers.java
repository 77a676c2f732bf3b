package dev.box.testkit;

import dev.box.api.internal.FileTrees;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The names of what the network escape harness creates on the machine, and the removal of what a
 * run whose JVM died left behind. Every name is {@code boxnc<pid of the JVM>}, alone or with a
 * one-letter suffix: network namespaces (and their {@code /etc/netns} directories), a veth end in
 * the machine's namespace, an nftables table, a directory of {@code /run}.
 */
final class HarnessLeftovers {
  private static final String PREFIX = "boxnc";
  private static final Pattern NAME = Pattern.compile(PREFIX + "([0-9]+)[a-z]?");

  private HarnessLeftovers() {}

  /** The name of this JVM's run. */
  static String nameOfThisRun() {
    return PREFIX + ProcessHandle.current().pid();
  }

  /**
   * Removes everything named for a run whose JVM is gone: its namespaces with the processes still
   * in them, their {@code /etc/netns} directories, its {@code /run} directory, its links and its
   * nftables table.
   */
  static void sweep() {
    for (String line : HarnessCommand.ip("netns", "list").lines().toList()) {
      String namespace = line.split(" ")[0];
      if (isLeftover(namespace)) {
        removeNamespace(namespace);
      }
    }
    for (Path parent : List.of(Path.of("/etc/netns"), Path.of("/run"))) {
      if (!Files.isDirectory(parent)) {
        continue;
      }
      try (Stream<Path> dirs = Files.list(parent)) {
        dirs.filter(d -> isLeftover(d.getFileName().toString()))
            .forEach(HarnessLeftovers::deleteDir);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    for (String line : HarnessCommand.ip("-o", "link", "show").lines().toList()) {
      String[] f = line.split(":\\s+|@", 3);
      if (f.length > 1 && isLeftover(f[1])) {
        HarnessCommand.ip("link", "del", f[1]);
      }
    }
    UplinkGuard.sweep(HarnessLeftovers::isLeftover);
  }

  /**
   * Kills what still runs in {@code namespace} (only the harness's own processes and sandboxes do),
   * then deletes it and its {@code /etc/netns} directory.
   */
  static void removeNamespace(String namespace) {
    HarnessCommand.Result pids =
        HarnessCommand.attempt(List.of("ip", "netns", "pids", namespace), "");
    if (pids.exitCode() == 0) {
      for (String pid :
          pids.output().lines().map(String::strip).filter(p -> !p.isEmpty()).toList()) {
        ProcessHandle.of(Long.parseLong(pid))
            .ifPresent(
                h -> {
                  h.destroyForcibly();
                  h.onExit().orTimeout(10, TimeUnit.SECONDS).join();
                });
      }
    }
    HarnessCommand.attempt(List.of("ip", "netns", "del", namespace), "");
    deleteDir(Path.of("/etc/netns", namespace));
  }

  static void deleteDir(Path dir) {
    try {
      FileTrees.deleteTree(dir);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static boolean isLeftover(String name) {
    Matcher m = NAME.matcher(name);
    return m.matches()
        && ProcessHandle.of(Long.parseLong(m.group(1))).map(h -> !h.isAlive()).orElse(true);
  }
}
