package dev.box.backend.bwrap;

import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.core.Hashes;
import dev.box.core.backend.BackendStatus;
import dev.box.core.backend.HostCommand;
import dev.box.core.backend.PoolLevel;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxBackend;
import dev.box.core.backend.SandboxSpec;
import dev.box.sandbox.IdMaps;
import dev.box.sandbox.IdmappedMounts;
import dev.box.sandbox.Launcher;
import dev.box.sandbox.NamespaceHost;
import dev.box.sandbox.NamespaceSettings;
import dev.box.sandbox.NamespaceStart;
import dev.box.sandbox.PreStarted;
import dev.box.sandbox.SandboxEtc;
import dev.box.sandbox.SandboxShape;
import dev.box.sandbox.WorkspaceSlots;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The bubblewrap backend: a session is a live bwrap sandbox running a holder process; commands are
 * spawned into it with nsenter and limited by the session's cgroups. The sandbox user is an
 * unprivileged host uid ({@link IdMaps}); every sandbox has a network namespace of its own, which
 * with the network on reaches the outside through slirp4netns behind an nftables egress firewall.
 *
 * <p>With {@code poolSize} above 0 a few sandboxes of the {@linkplain SandboxShape#pooled pooled
 * shape} wait, started ahead of their sessions ({@link PreStarted}); a spec of exactly that shape
 * takes one and has its workspace bound into it, any other starts its own.
 */
public final class BwrapBackend implements SandboxBackend {
  private static final Logger log = LoggerFactory.getLogger(BwrapBackend.class);
  private static final Pattern CHILD_PID = Pattern.compile("\"child-pid\"\\s*:\\s*(\\d+)");
  private static final long START_TIMEOUT_SECONDS = 15;

  /** The host uid the sandbox user is by default: outside every distribution's user ranges. */
  public static final int DEFAULT_SANDBOX_UID = 2_000_000;

  private final NamespaceSettings settings;
  private final @Nullable Path guard;
  private final String baseName;
  private final Path workspaces;
  private final Path etcDir;
  private final @Nullable Path bwrap;
  private final NamespaceStart starts;
  private final @Nullable Launcher launcher;
  private final BackendStatus status;
  private final PreStarted preStarted;
  private final IdmappedMounts idmapped;

  /** Probes the host and prepares the backend. */
  public BwrapBackend(NamespaceSettings settings) {
    Path dataDir = settings.dataDir();
    Path data = dataDir.toAbsolutePath().normalize();
    this.settings = settings;
    this.guard = settings.guard();
    this.baseName = "box-" + Hashes.shortSha256(data.toString());
    this.etcDir = dataDir.resolve("bwrap-etc");
    this.workspaces = data.resolve("workspaces");
    this.bwrap = HostCommand.find("bwrap");
    this.launcher = Launcher.onHost(guard != null);
    this.starts =
        new NamespaceStart("bwrap", settings, workspaces, baseName, BwrapBackend::failure);
    this.status = probe();
    this.preStarted =
        settings.preStarted(
            name(),
            status.available(),
            WorkspaceSlots.store(name(), data),
            spec -> true,
            this::startFresh);
    this.idmapped = settings.idmappedMounts(name());
    log.info(
        "bwrap backend: {} ({})",
        status.available() ? "available" : "unavailable",
        status.reason());
    if (guard == null) {
      log.warn(
          "bwrap backend: no syscall filter (seccomp none): {}; sandboxes still drop every"
              + " capability and cannot create user namespaces",
          settings.syscallGuard().reason());
    }
  }

  @Override
  public String name() {
    return "bwrap";
  }

  @Override
  public BackendStatus status() {
    return preStarted.reported(
        idmapped.reported(status),
        "no pre-started sandboxes (pool_size 0, or the slots cannot be mounted)",
        "");
  }

  @Override
  public @Nullable PoolLevel poolLevel() {
    return preStarted.level();
  }

  /** How many sessions have taken a pre-started sandbox so far (for tests and diagnostics). */
  public long pooledTakes() {
    return preStarted.taken();
  }

  private BackendStatus probe() {
    Map<String, String> enforced = starts.enforced(settings.guardPolicy());
    if (bwrap == null) {
      return new BackendStatus(
          name(), false, "bwrap not found (apt-get install bubblewrap)", enforced);
    }
    String unmet = NamespaceHost.unmet(launcher != null, "bubblewrap", "sandboxes");
    if (unmet != null) {
      return new BackendStatus(name(), false, unmet, enforced);
    }
    Path binary = bwrap;
    return starts.withAgentCapabilities(
        NamespaceHost.tryOut(
            name(), "bwrap", "bubblewrap " + binary, enforced, () -> trial(binary)));
  }

  /** Runs {@code true} in a throwaway sandbox: null when it ran, else why not. */
  private @Nullable String trial(Path binary) throws IOException, InterruptedException {
    SandboxEtc.write(etcDir);
    Process p =
        new ProcessBuilder(
                binary.toString(),
                "--unshare-user",
                "--unshare-pid",
                "--unshare-net",
                "--ro-bind",
                "/",
                "/",
                "--proc",
                "/proc",
                "/bin/true")
            .redirectErrorStream(true)
            .start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
      p.destroyForcibly();
      return "bwrap cannot create namespaces here: " + oneLine(output);
    }
    return null;
  }

  /**
   * Takes a pre-started sandbox when {@code spec} is of the pool's shape and one waits, binding the
   * workspace into it; otherwise starts one. A folder only its owner can use comes from an idmapped
   * mount ({@link IdmappedMounts}).
   */
  @Override
  public Sandbox start(SandboxSpec spec) {
    return idmapped.start(spec, workspaces, null, preStarted, this::startFresh);
  }

  private Sandbox startFresh(SandboxSpec spec) {
    return starts.start(spec, status, launcher, attempt -> startBwrap(spec, attempt));
  }

  /** Starts bwrap for {@code spec} and returns the pid of the sandbox's init once it is ready. */
  private long startBwrap(SandboxSpec spec, NamespaceStart.Attempt attempt)
      throws IOException, InterruptedException, ExecutionException, TimeoutException {
    Path bwrapPath = Objects.requireNonNull(bwrap, "bwrap");
    Path nsenterPath = Objects.requireNonNull(launcher, "launcher").nsenter();
    String tag = baseName + "/" + spec.sandboxName();
    List<String> argv = SandboxArgs.build(bwrapPath, spec, etcDir, tag, guard, attempt.agent());
    ProcessBuilder builder = new ProcessBuilder(argv);
    builder.environment().clear();
    builder.environment().put("PATH", "/usr/bin:/bin");
    builder.directory(Path.of("/").toFile());
    Process process = attempt.spawn(builder);
    Future<String> ready = starts.readers().submit(readUntil(process.getInputStream(), '\n'));
    long initPid = awaitInitPid(process);
    IdMaps.write(initPid, settings.sandboxUid());
    IdMaps.forbidNestedNamespaces(nsenterPath, initPid);
    // Before anything runs in the namespace: there is never a moment without the firewall.
    attempt.applyFirewall(initPid);
    release(process);
    awaitReady(process, ready);
    return initPid;
  }

  /** The error of a start that failed unexpectedly: the cause of a failed spawn, on one line. */
  private static BoxException failure(Exception e) {
    Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
    return new BoxException(
        BoxErrorCode.INTERNAL_ERROR,
        "bwrap backend error: " + oneLine(String.valueOf(cause.getMessage())),
        cause);
  }

  /**
   * Reads bwrap's info (or its error) from stderr and returns the pid of the sandbox's init; bwrap
   * writes it once the namespaces exist, then waits for {@link #release}.
   */
  private long awaitInitPid(Process process)
      throws InterruptedException, ExecutionException, TimeoutException {
    String infoText = startLine(starts.readers().submit(readUntil(process.getErrorStream(), '}')));
    Matcher m = CHILD_PID.matcher(infoText);
    if (!m.find()) {
      throw new BoxException(
          BoxErrorCode.INTERNAL_ERROR, "bwrap backend error: " + oneLine(infoText));
    }
    return Long.parseLong(m.group(1));
  }

  /** Lets bwrap go on once the maps (and the firewall) are in place. */
  private static void release(Process process) throws IOException {
    try (OutputStream in = process.getOutputStream()) {
      in.write('\n');
    }
  }

  /** Waits for the holder's "ready" line. */
  private void awaitReady(Process process, Future<String> ready)
      throws IOException, InterruptedException, ExecutionException, TimeoutException {
    String line = startLine(ready);
    if (!line.equals("ready\n")) {
      String error = new String(process.getErrorStream().readNBytes(4096), StandardCharsets.UTF_8);
      throw new BoxException(
          BoxErrorCode.INTERNAL_ERROR, "bwrap backend error: " + oneLine(error + " " + line));
    }
    try {
      process.getInputStream().close();
    } catch (IOException e) {
      // Nothing to do: the stream is gone either way.
    }
  }

  /** What {@code read} read; a sandbox that says nothing for the start timeout did not start. */
  private static String startLine(Future<String> read)
      throws InterruptedException, ExecutionException {
    try {
      return read.get(START_TIMEOUT_SECONDS, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      throw new BoxException(
          BoxErrorCode.INTERNAL_ERROR,
          "bwrap backend error: sandbox did not start within " + START_TIMEOUT_SECONDS + " s");
    }
  }

  /**
   * A task that reads up to and including {@code last}, or to the end of the stream (at most 64
   * KiB).
   */
  private static java.util.concurrent.Callable<String> readUntil(InputStream in, char last) {
    return () -> {
      ByteArrayOutputStream text = new ByteArrayOutputStream();
      int b;
      while (text.size() < 64 * 1024 && (b = in.read()) >= 0) {
        text.write(b);
        if (b == last) {
          break;
        }
      }
      return text.toString(StandardCharsets.UTF_8);
    };
  }

  @Override
  public void removeOrphans() {
    String mine = baseName + "/" + settings.instanceId() + "_";
    ProcessHandle.allProcesses()
        .filter(h -> isOrphanSandbox(h, mine))
        .forEach(
            h -> {
              log.info("killing sandbox left by an earlier instance: pid {}", h.pid());
              h.destroyForcibly();
            });
    starts.cgroups().removeOthers(settings.instanceId() + "_");
    starts.removeOrphanAgents(settings.instanceId());
    preStarted.removeOthers();
    idmapped.removeOthers();
  }

  private boolean isOrphanSandbox(ProcessHandle handle, String mine) {
    Optional<String[]> args = handle.info().arguments();
    if (args.isEmpty()) {
      return false;
    }
    for (String arg : args.get()) {
      if (arg.startsWith(baseName + "/") && !arg.startsWith(mine)) {
        return handle.info().command().map(c -> c.endsWith("/bwrap")).orElse(false);
      }
    }
    return false;
  }

  /** Whether the pool's workspaces are bound by the host mounter rather than by commands. */
  boolean slotsMountDirectly() {
    return preStarted.slots() instanceof WorkspaceSlots s && s.mountsDirectly();
  }

  @Override
  public void close() {
    preStarted.close();
    starts.close();
    idmapped.close();
  }

  private static String oneLine(String text) {
    return NamespaceHost.oneLine(text);
  }
}
