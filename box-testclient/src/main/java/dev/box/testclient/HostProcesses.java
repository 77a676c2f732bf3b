package dev.box.testclient;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The processes of the host as {@code /proc} shows them, for tests that prove a sandbox left
 * nothing running or leaked nothing onto a command line. Linux only.
 */
public final class HostProcesses {
  private HostProcesses() {}

  /**
   * The arguments of process {@code pid}, its program first; empty when it has ended (or is a
   * kernel thread).
   */
  public static List<String> commandLine(long pid) {
    try {
      String text =
          new String(
              Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline")),
              StandardCharsets.UTF_8);
      return text.isEmpty() ? List.of() : List.of(text.split("\0"));
    } catch (IOException e) {
      return List.of();
    }
  }

  /**
   * Every host process whose command line contains {@code text}, one {@code "pid: cmdline"} line
   * each, with the command line's NUL separators read as spaces; empty when there is none. A
   * process that ends while it is read is passed over.
   */
  public static String commandLinesContaining(String text) throws IOException {
    StringBuilder found = new StringBuilder();
    try (DirectoryStream<Path> procs = Files.newDirectoryStream(Path.of("/proc"), "[0-9]*")) {
      for (Path proc : procs) {
        try {
          String cmdline =
              new String(Files.readAllBytes(proc.resolve("cmdline")), StandardCharsets.UTF_8)
                  .replace('\0', ' ');
          if (cmdline.contains(text)) {
            found.append(proc.getFileName()).append(": ").append(cmdline).append('\n');
          }
        } catch (IOException e) {
          // The process ended while we looked.
        }
      }
    }
    return found.toString();
  }
}
