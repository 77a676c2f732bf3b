package dev.box.guard;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * {@code syscall-attacks}, a small C program that attempts the calls a sandbox's filter must refuse
 * and prints one line per attempt ({@code NAME allowed}, {@code NAME errno=1 EPERM} or {@code NAME
 * signal=31}). It is compiled with gcc, statically, so that it runs in any container image.
 */
public final class AttackProgram {
  /** What a refused call prints: errno 1. */
  public static final String EPERM = "errno=1 EPERM";

  /** What clone3 prints under the filter: errno 38, so that the C library falls back to clone. */
  public static final String ENOSYS = "errno=38 ENOSYS";

  /** What a call of a foreign ABI prints: the process was killed by SIGSYS. */
  public static final String KILLED_BY_SIGSYS = "signal=31";

  /**
   * The attempts to give a file a set-user-ID or set-group-ID mode, each through another call: the
   * filter refuses every one with EPERM.
   */
  public static final List<String> SET_ID =
      List.of(
          new String[] {
            "chmod_setuid", "chmod_setgid", "fchmod_setuid", "fchmodat_setgid",
            "fchmodat2_setuid", "open_setuid", "creat_setuid", "openat_setgid",
            "openat_tmpfile_setuid", "mknodat_setuid"
          });

  /** The same calls with a plain mode, which the filter lets through. */
  public static final List<String> PLAIN_MODES =
      List.of("plain_chmod", "plain_creat", "plain_openat");

  private AttackProgram() {}

  /**
   * Compiles the program into {@code dir} (made world-readable, so that a sandbox user can run it
   * from a read-only mount) and returns its path.
   */
  public static Path compile(Path dir) throws IOException, InterruptedException {
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
    Path source = dir.resolve("syscall-attacks.c");
    try (InputStream in = AttackProgram.class.getResourceAsStream("syscall-attacks.c")) {
      if (in == null) {
        throw new IOException("syscall-attacks.c is not on the class path");
      }
      Files.write(source, in.readAllBytes());
    }
    Path binary = dir.resolve("syscall-attacks");
    Process gcc =
        new ProcessBuilder(
                "gcc", "-static", "-O1", "-Wall", "-o", binary.toString(), source.toString())
            .redirectErrorStream(true)
            .start();
    String output = new String(gcc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!gcc.waitFor(120, TimeUnit.SECONDS) || gcc.exitValue() != 0) {
      throw new IOException("gcc could not compile syscall-attacks.c: " + output);
    }
    Files.setPosixFilePermissions(binary, PosixFilePermissions.fromString("rwxr-xr-x"));
    return binary;
  }

  /** The attempts in {@code output}, by name: {@code allowed}, {@code errno=N NAME}, ... */
  public static Map<String, String> results(String output) {
    Map<String, String> results = new LinkedHashMap<>();
    for (String line : output.lines().toList()) {
      int space = line.indexOf(' ');
      if (space > 0) {
        results.put(line.substring(0, space), line.substring(space + 1).strip());
      }
    }
    return results;
  }

  /** Whether this JVM runs on x86-64, where int 0x80 and x32 calls are foreign ABIs. */
  public static boolean onX86_64() {
    return List.of("amd64", "x86_64").contains(System.getProperty("os.arch"));
  }
}
