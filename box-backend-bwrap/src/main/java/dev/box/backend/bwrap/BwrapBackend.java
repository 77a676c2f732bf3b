package dev.box.backend.bwrap;

import dev.box.api.BoxCapabilities;
import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.BoxNetworkMode;
import dev.box.core.Hashes;
import dev.box.core.backend.BackendStatus;
import dev.box.core.backend.HostCommand;
import dev.box.core.backend.MountOwnership;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxBackend;
import dev.box.core.backend.SandboxSpec;
import dev.box.core.net.EgressPolicy;
import dev.box.core.net.EgressRuleset;
import dev.box.core.net.NetnsFirewall;
import dev.box.guard.SyscallGuard;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
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
 */
public final class BwrapBackend implements SandboxBackend {
  private static final Logger log = LoggerFactory.getLogger(BwrapBackend.class);
  private static final Pattern CHILD_PID = Pattern.compile("\"child-pid\"\\s*:\\s*(\\d+)");
  private static final long START_TIMEOUT_SECONDS = 15;

  /** The host uid the sandbox user is by default: outside every distribution's user ranges. */
  public static final int DEFAULT_SANDBOX_UID = 2_000_000;

  private final String instanceId;
  private final int sandboxUid;
  private final EgressPolicy egress;
  private final NetnsFirewall firewall;
  private final @Nullable Path slirp4netns;
  private final SyscallGuard syscallGuard;
  private final @Nullable Path guard;
  private final String baseName;
  private final Path workspaces;
  private final Path etcDir;
  private final @Nullable Path bwrap;
  private final CgroupDriver cgroups;
  private final @Nullable Launcher launcher;
  private final @Nullable Path nsenter;
  private final BackendStatus status;

  /**
   * A spawner thread that lives as long as the backend: bwrap's --die-with-parent follows the
   * thread that forked it, so sandboxes must not be forked by pool threads that may retire.
   */
  private final ExecutorService spawner =
      Executors.newSingleThreadExecutor(
          Thread.ofPlatform().name("box-bwrap-spawner").daemon().factory());

  /** Platform threads: a blocking pipe read would pin a virtual thread's carrier. */
  private final ExecutorService readers =
      Executors.newCachedThreadPool(
          Thread.ofPlatform().name("box-bwrap-reader").daemon().factory());

  /**
   * Probes the host and prepares the backend.
   *
   * @param dataDir the runtime's data directory; cgroups and sandboxes are tagged with its hash so
   *     that two data directories never touch each other's
   * @param instanceId the id of this server instance
   */
  public BwrapBackend(Path dataDir, String instanceId) {
    this(
        dataDir,
        instanceId,
        true,
        DEFAULT_SANDBOX_UID,
        EgressPolicy.DEFAULT,
        SyscallGuard.install(dataDir));
  }

  /**
   * Probes the host and prepares the backend.
   *
   * @param dataDir the runtime's data directory
   * @param instanceId the id of this server instance
   * @param useCgroups false to limit with rlimits only, as on a host without writable cgroups
   * @param sandboxUid the host uid (and gid) the sandbox user is
   * @param egress the operator's egress policy for network-on sandboxes
   * @param syscallGuard the syscall guard every sandbox process runs through, when available
   */
  public BwrapBackend(
      Path dataDir,
      String instanceId,
      boolean useCgroups,
      int sandboxUid,
      EgressPolicy egress,
      SyscallGuard syscallGuard) {
    if (sandboxUid <= 0) {
      throw new IllegalArgumentException("sandbox_uid must be greater than 0: " + sandboxUid);
    }
    this.instanceId = instanceId;
    this.sandboxUid = sandboxUid;
    this.egress = egress;
    this.syscallGuard = syscallGuard;
    this.guard = syscallGuard.available() ? syscallGuard.binary() : null;
    this.firewall = NetnsFirewall.probe();
    this.slirp4netns = HostCommand.find("slirp4netns");
    this.baseName = "box-" + Hashes.shortSha256(dataDir.toAbsolutePath().normalize().toString());
    this.etcDir = dataDir.resolve("bwrap-etc");
    this.workspaces = dataDir.toAbsolutePath().normalize().resolve("workspaces");
    this.bwrap = HostCommand.find("bwrap");
    Path nsenter = HostCommand.find("nsenter");
    this.nsenter = nsenter;
    Path setpriv = HostCommand.find("setpriv");
    this.launcher =
        nsenter != null && setpriv != null ? new Launcher(setpriv, nsenter, guard != null) : null;
    this.cgroups = useCgroups ? NamespaceHost.probeCgroups(baseName) : new NoCgroupDriver();
    this.status = probe(nsenter, setpriv);
    log.info(
        "bwrap backend: {} ({})",
        status.available() ? "available" : "unavailable",
        status.reason());
    if (guard == null) {
      log.warn(
          "bwrap backend: no syscall filter (seccomp none): {}; sandboxes still drop every"
              + " capability and cannot create user namespaces",
          syscallGuard.reason());
    }
  }

  @Override
  public String name() {
    return "bwrap";
  }

  @Override
  public BackendStatus status() {
    return status;
  }

  private BackendStatus probe(@Nullable Path nsenter, @Nullable Path setpriv) {
    Map<String, String> enforced =
        NamespaceHost.enforced(
            cgroups,
            networkStatus(),
            guard != null ? syscallGuard.policy() : SyscallGuard.NONE,
            sandboxUid);
    if (bwrap == null) {
      return new BackendStatus(
          name(), false, "bwrap not found (apt-get install bubblewrap)", enforced);
    }
    if (nsenter == null || setpriv == null) {
      return new BackendStatus(
          name(), false, "nsenter or setpriv not found (util-linux)", enforced);
    }
    if (!NamespaceHost.runsAsRoot()) {
      return new BackendStatus(
          name(),
          false,
          "the bubblewrap backend needs root, to map the sandbox user onto an unprivileged uid and"
              + " to enter sandboxes (run box serve as root, or use docker or podman)",
          enforced);
    }
    try {
      SandboxEtc.write(etcDir);
      Process p =
          new ProcessBuilder(
                  bwrap.toString(),
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
        return new BackendStatus(
            name(), false, "bwrap cannot create namespaces here: " + oneLine(output), enforced);
      }
    } catch (IOException e) {
      return new BackendStatus(name(), false, "bwrap failed to start: " + e.getMessage(), enforced);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new BackendStatus(name(), false, "interrupted while probing bwrap", enforced);
    }
    return new BackendStatus(
        name(),
        true,
        "bubblewrap " + bwrap,
        enforced,
        Set.of(BoxCapabilities.READ_ONLY_ROOTFS, BoxCapabilities.PROCESS_MEMORY_LIMIT));
  }

  /** How network-on sandboxes are kept off the host: {@code nftables}, or {@code none: why}. */
  private String networkStatus() {
    return NamespaceHost.networkStatus(slirp4netns, firewall);
  }

  @Override
  public Sandbox start(SandboxSpec spec) {
    Path bwrapPath = bwrap;
    Launcher spawnLauncher = launcher;
    Path nsenterPath = nsenter;
    if (!status.available() || bwrapPath == null || spawnLauncher == null || nsenterPath == null) {
      throw new BoxException(
          BoxErrorCode.BACKEND_UNAVAILABLE, "bwrap backend is unavailable: " + status.reason());
    }
    boolean networkOn = spec.network() == BoxNetworkMode.ON;
    Path slirp = slirp4netns;
    if (networkOn && (slirp == null || !firewall.available())) {
      throw new BoxException(
          BoxErrorCode.BACKEND_UNAVAILABLE,
          "network on is unavailable on this server: the sandbox could not be kept off the host"
              + " (egress: "
              + networkStatus()
              + ")");
    }
    String tag = baseName + "/" + spec.sandboxName();
    MountOwnership.prepare(spec, workspaces, sandboxUid);
    CgroupDriver.SessionCgroup cgroup =
        cgroups.createSession(spec.sandboxName(), spec.memoryMb(), spec.pidsLimit(), spec.cpus());
    Process process = null;
    Process network = null;
    try {
      List<String> argv = SandboxArgs.build(bwrapPath, spec, etcDir, tag, guard);
      ProcessBuilder builder = new ProcessBuilder(argv);
      builder.environment().clear();
      builder.environment().put("PATH", "/usr/bin:/bin");
      builder.directory(Path.of("/").toFile());
      process = spawner.submit(builder::start).get();
      Future<String> ready = readers.submit(readUntil(process.getInputStream(), '\n'));
      long initPid = awaitInitPid(process);
      IdMaps.write(initPid, sandboxUid);
      IdMaps.forbidNestedNamespaces(nsenterPath, initPid);
      if (networkOn) {
        // Before anything runs in the namespace: there is never a moment without the firewall.
        firewall.apply(
            initPid,
            EgressRuleset.render(
                egress,
                spec.egress(),
                NetnsFirewall.hostAddresses(),
                UserModeNetwork.forbidden(),
                List.of(UserModeNetwork.DNS)));
      }
      release(process);
      awaitReady(process, ready);
      if (networkOn && slirp != null) {
        network = UserModeNetwork.start(slirp, initPid, readers);
      }
      return new NamespaceSandbox(
          spec.sandboxName(), process, initPid, cgroup, spawnLauncher, network);
    } catch (IOException | ExecutionException | TimeoutException | RuntimeException e) {
      abandon(process, network, cgroup);
      if (e instanceof BoxException box) {
        throw box;
      }
      Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
      throw new BoxException(
          BoxErrorCode.INTERNAL_ERROR,
          "bwrap backend error: " + oneLine(String.valueOf(cause.getMessage())),
          cause);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      abandon(process, network, cgroup);
      throw new BoxException(
          BoxErrorCode.RUNTIME_UNAVAILABLE, "interrupted while starting a sandbox");
    }
  }

  private static void abandon(
      @Nullable Process bwrap, @Nullable Process network, CgroupDriver.SessionCgroup cgroup) {
    if (network != null) {
      UserModeNetwork.stop(network);
    }
    if (bwrap != null) {
      bwrap.destroyForcibly();
    }
    cgroup.destroy();
  }

  /**
   * Reads bwrap's info (or its error) from stderr and returns the pid of the sandbox's init; bwrap
   * writes it once the namespaces exist, then waits for {@link #release}.
   */
  private long awaitInitPid(Process process)
      throws InterruptedException, ExecutionException, TimeoutException {
    String infoText = startLine(readers.submit(readUntil(process.getErrorStream(), '}')));
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
    BwrapProcess.closeQuietly(process.getInputStream());
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
    String mine = baseName + "/" + instanceId + "_";
    ProcessHandle.allProcesses()
        .filter(h -> isOrphanSandbox(h, mine))
        .forEach(
            h -> {
              log.info("killing sandbox left by an earlier instance: pid {}", h.pid());
              h.destroyForcibly();
            });
    cgroups.removeOthers(instanceId + "_");
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

  @Override
  public void close() {
    spawner.shutdownNow();
    readers.shutdownNow();
    cgroups.close();
  }

  private static String oneLine(String text) {
    return NamespaceHost.oneLine(text);
  }
}
