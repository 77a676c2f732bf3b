package dev.box.core.agent;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;

/** Finds the host pid of a process that a sandbox knows by the pid of its own pid namespace. */
public final class HostPids {
  private HostPids() {}

  /**
   * The host pid, among the pids listed in {@code procsFile} (a cgroup's), of the process whose
   * innermost pid is {@code sandboxPid}, {@code exclude} (the agent itself) never.
   *
   * @throws IOException when none is
   */
  public static long find(Path procsFile, long sandboxPid, long exclude) throws IOException {
    List<String> candidates = Files.readAllLines(procsFile);
    for (String line : candidates) {
      String text = line.strip();
      if (text.isEmpty()) {
        continue;
      }
      long pid = Long.parseLong(text);
      if (pid != exclude && innermostPid(pid) == sandboxPid) {
        return pid;
      }
    }
    throw new IOException("no process " + sandboxPid + " of the sandbox is waiting to be admitted");
  }

  /** The last pid of the {@code NSpid} line of {@code /proc/<pid>/status}, or -1. */
  static long innermostPid(long pid) throws IOException {
    List<String> status;
    try {
      status = Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"));
    } catch (NoSuchFileException e) {
      return -1;
    }
    for (String line : status) {
      if (line.startsWith("NSpid:")) {
        String[] words = line.substring("NSpid:".length()).strip().split("\\s+");
        return Long.parseLong(words[words.length - 1]);
      }
    }
    return -1;
  }
}
