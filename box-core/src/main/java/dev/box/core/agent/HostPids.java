package dev.box.core.agent;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/** Finds the host pid of a process that a sandbox knows by the pid of its own pid namespace. */
public final class HostPids {
  private static final String NSPID = "\nNSpid:";

  private HostPids() {}

  /**
   * The host pid, among the pids listed in {@code procsFile} (a cgroup's), of the process whose
   * innermost pid is {@code sandboxPid}, {@code exclude} (the agent itself) never.
   *
   * @throws IOException when none is
   */
  public static long find(Path procsFile, long sandboxPid, long exclude) throws IOException {
    for (String word : Files.readString(procsFile, StandardCharsets.ISO_8859_1).split("\n")) {
      String text = word.strip();
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
    String status;
    try {
      // Latin-1 decodes any byte: a process's name is its own to choose.
      status =
          Files.readString(
              Path.of("/proc", Long.toString(pid), "status"), StandardCharsets.ISO_8859_1);
    } catch (NoSuchFileException e) {
      return -1;
    }
    return innermostPid(status);
  }

  /**
   * The last pid of the {@code NSpid} line of {@code status}, a {@code /proc/<pid>/status}, or -1.
   */
  static long innermostPid(String status) {
    int line = status.indexOf(NSPID);
    if (line < 0) {
      return -1;
    }
    int start = line + NSPID.length();
    int end = status.indexOf('\n', start);
    String[] words = status.substring(start, end < 0 ? status.length() : end).strip().split("\\s+");
    return Long.parseLong(words[words.length - 1]);
  }
}
