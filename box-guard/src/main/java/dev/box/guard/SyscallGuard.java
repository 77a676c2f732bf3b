package dev.box.guard;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * The {@code box-guard} helper, installed on this host, and whether its seccomp filter can be
 * applied here.
 *
 * <p>{@code box-guard [--uid N --gid N] [--init] -- PROGRAM [ARGS...]} runs PROGRAM under the
 * filter (see docs/SECURITY.md); any failure exits 125 with one line on stderr and never runs
 * PROGRAM unfiltered. A backend mounts {@link #binary()} read-only at {@link #SANDBOX_PATH} in
 * every sandbox and starts every process through it ({@link #sandboxCommand}).
 *
 * <p>A value is immutable. {@link #available()} is true only when the helper was extracted and its
 * {@code --policy} probe loaded the filter on this kernel; otherwise {@link #policy()} is {@value
 * #NONE} and {@link #reason()} says why.
 */
public final class SyscallGuard {
  /** Where every sandbox finds the helper. */
  public static final String SANDBOX_PATH = "/.box/box-guard";

  /** The helper's name, in the jar (with its arch) and in the data directory's {@code bin/}. */
  private static final String NAME = "box-guard";

  /** The policy of this build's filter: Docker's default profile for a process without caps. */
  public static final String POLICY = "docker-default-equivalent";

  /** {@link #policy()} when no filter can be applied. */
  public static final String NONE = "none";

  /** The exit status of the helper when it fails before running the program. */
  public static final int GUARD_FAILED = 125;

  private static final long PROBE_TIMEOUT_SECONDS = 30;

  /**
   * One install per data directory and JVM: extracting and probing again for every backend a server
   * opens would only repeat the same answer. Keyed by the binary's absolute path.
   */
  private static final ConcurrentHashMap<Path, SyscallGuard> INSTALLED = new ConcurrentHashMap<>();

  private final @Nullable Path binary;
  private final String policy;
  private final String reason;

  private SyscallGuard(@Nullable Path binary, String policy, String reason) {
    this.binary = binary;
    this.policy = policy;
    this.reason = reason;
  }

  /**
   * Extracts the helper for this host's arch to {@code <dataDir>/bin/box-guard} (mode 0755, written
   * to a temporary file and renamed into place; an identical file is reused) and probes it. Safe to
   * call from several threads; the result is cached per data directory, and the file is written
   * again if it was changed or removed since.
   *
   * @param dataDir the server's data directory
   * @return the installed helper, or an unavailable one whose {@link #reason()} says why
   */
  public static SyscallGuard install(Path dataDir) {
    return HelperBinaries.installCached(
        INSTALLED, dataDir, NAME, SyscallGuard::available, SyscallGuard::extractAndProbe);
  }

  /** A guard that is not available, for {@code reason}. */
  public static SyscallGuard unavailable(String reason) {
    return new SyscallGuard(null, NONE, reason);
  }

  /** {@code [SANDBOX_PATH, "--", program...]}: runs {@code program} under the filter. */
  public static List<String> sandboxCommand(List<String> program) {
    return command(List.of("--"), program);
  }

  /**
   * {@code [SANDBOX_PATH, "--init", "--", program...]}: as PID 1 of a container, runs {@code
   * program} under the filter, reaps orphans, forwards termination signals, and exits with the
   * program's status; the init itself is filtered too.
   */
  public static List<String> sandboxInitCommand(List<String> program) {
    return command(List.of("--init", "--"), program);
  }

  private static List<String> command(List<String> options, List<String> program) {
    if (program.isEmpty()) {
      throw new IllegalArgumentException("the program to run under box-guard is missing");
    }
    List<String> command = new ArrayList<>();
    command.add(SANDBOX_PATH);
    command.addAll(options);
    command.addAll(program);
    return List.copyOf(command);
  }

  /** The helper on this host, or null when it is not available. */
  public @Nullable Path binary() {
    return binary;
  }

  /** {@value #POLICY} when available, else {@value #NONE}. */
  public String policy() {
    return policy;
  }

  /** Why the guard is unavailable, or how it runs when it is. */
  public String reason() {
    return reason;
  }

  /** Whether the filter was loaded by this host's kernel when probed. */
  public boolean available() {
    return binary != null;
  }

  @Override
  public String toString() {
    return "SyscallGuard[" + policy + ": " + reason + "]";
  }

  private static SyscallGuard extractAndProbe(Path target) {
    byte[] bytes;
    try {
      bytes = HelperBinaries.bytes(NAME);
    } catch (IOException e) {
      return unavailable("cannot read the box-guard binary from the jar: " + e.getMessage());
    }
    if (bytes == null) {
      return unavailable(
          "no box-guard binary for this arch ("
              + System.getProperty("os.arch")
              + ") in this build; box-guard is built for x86_64 and aarch64 hosts");
    }
    try {
      HelperBinaries.install(target, bytes);
    } catch (IOException e) {
      return unavailable("cannot install box-guard at " + target + ": " + e);
    }
    return probe(target);
  }

  /** Runs {@code box-guard --policy}: it loads the filter in a child and names the policy. */
  private static SyscallGuard probe(Path binary) {
    try {
      Process process =
          new ProcessBuilder(binary.toString(), "--policy")
              .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
              .start();
      CompletableFuture<String> out = drain(process.getInputStream());
      CompletableFuture<String> err = drain(process.getErrorStream());
      if (!process.waitFor(PROBE_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        return unavailable("box-guard --policy did not answer within 30 s");
      }
      String output = out.get(PROBE_TIMEOUT_SECONDS, TimeUnit.SECONDS).strip();
      String error = err.get(PROBE_TIMEOUT_SECONDS, TimeUnit.SECONDS).strip();
      if (process.exitValue() != 0) {
        return unavailable(
            "the kernel refused the seccomp filter: box-guard --policy exited "
                + process.exitValue()
                + (error.isEmpty() ? "" : ": " + error));
      }
      if (!output.equals(POLICY)) {
        return unavailable("box-guard --policy named an unknown policy: " + output);
      }
      return new SyscallGuard(binary, POLICY, "box-guard at " + binary + " loads " + POLICY);
    } catch (IOException | ExecutionException | TimeoutException e) {
      return unavailable("cannot run box-guard --policy: " + e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return unavailable("interrupted while probing box-guard");
    }
  }

  private static CompletableFuture<String> drain(InputStream in) {
    return CompletableFuture.supplyAsync(
        () -> {
          try (in) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
          } catch (IOException e) {
            return "";
          }
        });
  }
}
