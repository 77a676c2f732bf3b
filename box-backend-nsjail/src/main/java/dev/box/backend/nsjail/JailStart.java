package dev.box.backend.nsjail;

import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.internal.ShellScript;
import dev.box.core.backend.HostCommand;
import dev.box.sandbox.NamespaceHost;
import dev.box.sandbox.ParentDeath;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The steps around a jail's start and end that touch host processes. */
final class JailStart {
  private static final Logger log = LoggerFactory.getLogger(JailStart.class);
  private static final Duration MASK_TIMEOUT = Duration.ofSeconds(10);

  /**
   * Hides the files of /proc that tell too much about the host, as Docker masks them; run as host
   * root in the jail's mount namespace. A fixed script, read from stdin.
   */
  private static final String MASK_PROC = ShellScript.load(JailStart.class, "mask-proc.sh");

  private JailStart() {}

  /** Waits for the holder's "ready" line; anything else is nsjail's error, on its stderr. */
  static void awaitReady(Process nsjail, ExecutorService readers, Duration timeout)
      throws IOException, InterruptedException {
    Future<String> ready = readers.submit(() -> readLine(nsjail.getInputStream()));
    String line;
    try {
      line = ready.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      ready.cancel(true);
      throw new BoxException(
          BoxErrorCode.INTERNAL_ERROR,
          "nsjail backend error: jail did not start within " + timeout.toSeconds() + " s");
    } catch (ExecutionException e) {
      throw new IOException("cannot read nsjail's output", e.getCause());
    }
    if (!line.equals("ready\n")) {
      nsjail.destroyForcibly();
      String error = new String(nsjail.getErrorStream().readNBytes(4096), StandardCharsets.UTF_8);
      throw new BoxException(
          BoxErrorCode.INTERNAL_ERROR,
          "nsjail backend error: " + NamespaceHost.oneLine(error + " " + line));
    }
    // Neither stream is read again; closing them lets a chatty nsjail fail instead of block.
    nsjail.getInputStream().close();
  }

  private static String readLine(InputStream in) throws IOException {
    ByteArrayOutputStream text = new ByteArrayOutputStream();
    int b;
    while (text.size() < 4096 && (b = in.read()) >= 0) {
      text.write(b);
      if (b == '\n') {
        break;
      }
    }
    return text.toString(StandardCharsets.UTF_8);
  }

  /**
   * The pid of the jail's pid 1: nsjail's only child once the holder said "ready" ({@code nsjail}
   * is the process the start spawned, which supervises nsjail).
   */
  static long initPid(Process nsjail) {
    return ParentDeath.jailOf(nsjail.toHandle())
        .children()
        .findFirst()
        .map(ProcessHandle::pid)
        .orElseThrow(
            () ->
                new BoxException(
                    BoxErrorCode.INTERNAL_ERROR, "nsjail backend error: the jail has no process"));
  }

  /** Masks /proc in the mount namespace of process {@code pid}. */
  static void maskProc(Path nsenter, long pid) throws IOException {
    HostCommand.run(
        List.of(
            nsenter.toString(), "--target", Long.toString(pid), "--mount", "--", "/bin/sh", "-s"),
        MASK_PROC,
        MASK_TIMEOUT);
  }

  /**
   * Kills the jails of this data directory ({@code tag}) that another instance left: the nsjail
   * processes that run a configuration under {@code jailsDir}, and holders whose nsjail died (their
   * {@code $0} is {@code tag/<sandbox>}), but none whose sandbox name starts with {@code
   * keepPrefix}.
   */
  static void killOthers(String tag, Path jailsDir, String keepPrefix) {
    String jails = jailsDir + "/";
    String holders = tag + "/";
    ProcessHandle.allProcesses()
        .forEach(
            h -> {
              List<String> argv = commandLine(h.pid());
              if (argv.isEmpty()) {
                return;
              }
              String first = argv.get(0);
              boolean nsjail =
                  first.endsWith("/nsjail")
                      && argv.stream()
                          .anyMatch(a -> a.startsWith(jails) && !a.startsWith(jails + keepPrefix));
              boolean holder =
                  argv.stream()
                      .anyMatch(a -> a.startsWith(holders) && !a.startsWith(holders + keepPrefix));
              if (nsjail || holder) {
                log.info("killing a jail left by an earlier instance: pid {} {}", h.pid(), first);
                h.children().forEach(ProcessHandle::destroyForcibly);
                h.destroyForcibly();
              }
            });
  }

  /** The NUL-separated words of /proc/<pid>/cmdline, or none when it cannot be read. */
  static List<String> commandLine(long pid) {
    try {
      byte[] raw = Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline"));
      String text = new String(raw, StandardCharsets.UTF_8);
      return Optional.of(text)
          .filter(t -> !t.isEmpty())
          .map(t -> List.of(t.split("\0")))
          .orElse(List.of());
    } catch (IOException | RuntimeException e) {
      return List.of();
    }
  }
}
