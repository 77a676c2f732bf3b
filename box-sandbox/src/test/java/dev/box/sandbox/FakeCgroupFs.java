package dev.box.sandbox;

import dev.box.api.time.Ticker;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;

/**
 * A cgroup filesystem as a plain directory tree, for the drivers where the real one cannot be
 * written (this machine's cgroups are v1, and tests do not run as a cgroup delegate). It does what
 * the kernel does and a directory tree does not: rmdir takes a cgroup's control files along and
 * fails while the cgroup has children or processes; {@link #exitWhenDone} empties a cgroup.procs
 * when its process has exited. Everything else the drivers do is plain file I/O.
 */
final class FakeCgroupFs {
  private final List<Path> removed = new CopyOnWriteArrayList<>();
  private final List<Path> killedWhenRemoved = new CopyOnWriteArrayList<>();

  /** The drivers' file operations on this tree. */
  final CgroupFiles files = new CgroupFiles(this::rmdir, Ticker.system(), Thread::sleep);

  /** The cgroups removed so far, in order. */
  List<Path> removed() {
    return removed;
  }

  /** The removed cgroups whose cgroup.kill held 1 when they were removed. */
  List<Path> killedWhenRemoved() {
    return killedWhenRemoved;
  }

  /** Creates {@code dir} with the core files the kernel gives every cgroup v2. */
  static Path v2Cgroup(Path dir, String controllers) throws IOException {
    Files.createDirectories(dir);
    write(dir.resolve("cgroup.controllers"), controllers);
    write(dir.resolve("cgroup.subtree_control"), "");
    write(dir.resolve("cgroup.procs"), "");
    write(dir.resolve("cgroup.kill"), "");
    write(dir.resolve("cgroup.events"), "populated 0\nfrozen 0\n");
    return dir;
  }

  /** Puts {@code process} into the cgroup {@code dir}, and takes it out once it has exited. */
  static void exitWhenDone(Path dir, Process process) throws IOException {
    Path procs = dir.resolve("cgroup.procs");
    write(procs, process.pid() + "\n");
    process
        .onExit()
        .thenRun(
            () -> {
              try {
                write(procs, "");
              } catch (IOException e) {
                throw new UncheckedIOException(e);
              }
            });
  }

  /** What a driver should report it enforces each of memory, pids, cpu and kill with, in order. */
  static Map<String, String> enforced(String memory, String pids, String cpu, String kill) {
    Map<String, String> enforced = new LinkedHashMap<>();
    enforced.put("memory", memory);
    enforced.put("pids", pids);
    enforced.put("cpu", cpu);
    enforced.put("kill", kill);
    return enforced;
  }

  static void write(Path file, String text) throws IOException {
    Files.writeString(file, text, StandardCharsets.US_ASCII);
  }

  static String read(Path file) throws IOException {
    return Files.readString(file, StandardCharsets.US_ASCII);
  }

  private void rmdir(Path dir) throws IOException {
    if (!Files.isDirectory(dir)) {
      return;
    }
    try (Stream<Path> entries = Files.list(dir)) {
      if (entries.anyMatch(Files::isDirectory)) {
        throw new DirectoryNotEmptyException(dir.toString());
      }
    }
    Path procs = dir.resolve("cgroup.procs");
    if (Files.exists(procs) && !read(procs).isBlank()) {
      throw new IOException(dir + ": Device or resource busy");
    }
    Path kill = dir.resolve("cgroup.kill");
    if (Files.exists(kill) && read(kill).strip().equals("1")) {
      killedWhenRemoved.add(dir);
    }
    try (Stream<Path> entries = Files.list(dir)) {
      for (Path file : entries.toList()) {
        Files.delete(file);
      }
    }
    Files.delete(dir);
    removed.add(dir);
  }
}
