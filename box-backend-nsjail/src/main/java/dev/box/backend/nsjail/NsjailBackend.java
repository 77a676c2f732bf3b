package dev.box.backend.nsjail;

import dev.box.api.BoxCapabilities;
import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.BoxNetworkMode;
import dev.box.backend.bwrap.CgroupDriver;
import dev.box.backend.bwrap.IdMaps;
import dev.box.backend.bwrap.Launcher;
import dev.box.backend.bwrap.NamespaceHost;
import dev.box.backend.bwrap.NamespaceSandbox;
import dev.box.backend.bwrap.NoCgroupDriver;
import dev.box.backend.bwrap.SandboxEtc;
import dev.box.backend.bwrap.UserModeNetwork;
import dev.box.core.Hashes;
import dev.box.core.backend.BackendStatus;
import dev.box.core.backend.HostCommand;
import dev.box.core.backend.MountOwnership;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxBackend;
import dev.box.core.backend.SandboxMount;
import dev.box.core.backend.SandboxSpec;
import dev.box.core.net.EgressPolicy;
import dev.box.core.net.EgressRuleset;
import dev.box.core.net.NetnsFirewall;
import dev.box.guard.SyscallGuard;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The nsjail backend: a session is a live nsjail jail whose pid 1 is a holder process; commands are
 * spawned into it with nsenter and limited by the session's cgroups, exactly as on the bubblewrap
 * backend (whose launcher, cgroup drivers, user-mode network and sandbox type it uses). nsjail
 * builds the namespaces, the uid maps and the mount tree from a configuration file Box writes
 * ({@link JailConfig}); Box then masks the revealing files of /proc, forbids nested user namespaces
 * and, with the network on, puts the firewall and slirp4netns in place before the session is handed
 * out.
 */
public final class NsjailBackend implements SandboxBackend {
  private static final Logger log = LoggerFactory.getLogger(NsjailBackend.class);
  private static final Duration START_TIMEOUT = Duration.ofSeconds(15);

  private final String instanceId;
  private final int sandboxUid;
  private final EgressPolicy egress;
  private final NetnsFirewall firewall;
  private final @Nullable Path slirp4netns;
  private final SyscallGuard syscallGuard;
  private final @Nullable Path guard;
  private final String baseName;
  private final Path jailsDir;
  private final Path workspaces;
  private final Path etcDir;
  private final @Nullable Path nsjail;
  private final @Nullable Path nsenter;
  private final @Nullable Launcher launcher;
  private final Path setpriv;
  private final CgroupDriver cgroups;
  private final BackendStatus status;

  /**
   * A spawner thread that lives as long as the backend: nsjail dies with the thread that forked it
   * ({@code setpriv --pdeathsig}), so jails must not be forked by pool threads that may retire.
   */
  private final ExecutorService spawner =
      Executors.newSingleThreadExecutor(
          Thread.ofPlatform().name("box-nsjail-spawner").daemon().factory());

  /** Platform threads: a blocking pipe read would pin a virtual thread's carrier. */
  private final ExecutorService readers =
      Executors.newCachedThreadPool(
          Thread.ofPlatform().name("box-nsjail-reader").daemon().factory());

  /**
   * Probes the host and prepares the backend.
   *
   * @param dataDir the runtime's data directory; jails and cgroups are tagged with its hash so that
   *     two data directories never touch each other's
   * @param instanceId the id of this server instance
   * @param useCgroups false to run without cgroups (then pids and cpu are not limited)
   * @param sandboxUid the host uid (and gid) the sandbox user is
   * @param egress the operator's egress policy for network-on sandboxes
   * @param syscallGuard the syscall guard every sandbox process runs through, when available
   * @param nsjailPath the nsjail binary to use, or null to look for {@code nsjail} in the system
   *     directories
   */
  public NsjailBackend(
      Path dataDir,
      String instanceId,
      boolean useCgroups,
      int sandboxUid,
      EgressPolicy egress,
      SyscallGuard syscallGuard,
      @Nullable Path nsjailPath) {
    if (sandboxUid <= 0) {
      throw new IllegalArgumentException("sandbox_uid must be greater than 0: " + sandboxUid);
    }
    Path data = dataDir.toAbsolutePath().normalize();
    this.instanceId = instanceId;
    this.sandboxUid = sandboxUid;
    this.egress = egress;
    this.syscallGuard = syscallGuard;
    this.guard = syscallGuard.available() ? syscallGuard.binary() : null;
    this.firewall = NetnsFirewall.probe();
    this.slirp4netns = HostCommand.find("slirp4netns");
    this.baseName = tagOf(data);
    this.jailsDir = data.resolve("nsjail");
    this.etcDir = data.resolve("nsjail-etc");
    this.workspaces = data.resolve("workspaces");
    this.nsjail = nsjailPath != null ? nsjailPath : HostCommand.find("nsjail");
    this.nsenter = HostCommand.find("nsenter");
    Path setpriv = HostCommand.find("setpriv");
    this.setpriv = setpriv != null ? setpriv : Path.of("/usr/bin/setpriv");
    this.launcher =
        nsenter != null && setpriv != null ? new Launcher(setpriv, nsenter, guard != null) : null;
    this.cgroups = useCgroups ? NamespaceHost.probeCgroups(baseName) : new NoCgroupDriver();
    this.status = probe(nsjailPath);
    log.info(
        "nsjail backend: {} ({})",
        status.available() ? "available" : "unavailable",
        status.reason());
  }

  /**
   * The tag of a data directory's jails: their cgroups' base name, and the start of their holders'
   * {@code $0} ({@code <tag>/<sandbox>}).
   */
  public static String tagOf(Path dataDir) {
    return "box-nsjail-" + Hashes.shortSha256(dataDir.toAbsolutePath().normalize().toString());
  }

  @Override
  public String name() {
    return "nsjail";
  }

  @Override
  public BackendStatus status() {
    return status;
  }

  private BackendStatus probe(@Nullable Path configured) {
    Map<String, String> enforced =
        NamespaceHost.enforced(
            cgroups,
            NamespaceHost.networkStatus(slirp4netns, firewall),
            guard != null ? syscallGuard.policy() : SyscallGuard.NONE,
            sandboxUid);
    enforced.put("nsjail_time_limit", "off: the server's exec timeout kills the process tree");
    Path binary = nsjail;
    if (binary == null || !Files.isExecutable(binary)) {
      String reason =
          configured != null
              ? "nsjail not found at " + configured + " (nsjail_path)"
              : "nsjail not found in /usr/bin, /bin, /usr/sbin, /sbin or /usr/local/bin (build it"
                  + " with scripts/nsjail, or set nsjail_path)";
      return new BackendStatus(name(), false, reason, enforced);
    }
    if (nsenter == null || launcher == null) {
      return new BackendStatus(
          name(), false, "nsenter or setpriv not found (util-linux)", enforced);
    }
    if (!NamespaceHost.runsAsRoot()) {
      return new BackendStatus(
          name(),
          false,
          "the nsjail backend needs root, to map the sandbox user onto an unprivileged uid and to"
              + " enter jails (run box serve as root, or use docker or podman)",
          enforced);
    }
    try {
      SandboxEtc.write(etcDir);
      Files.createDirectories(jailsDir);
      Path config = jailsDir.resolve("probe.cfg");
      Files.writeString(config, configText("probe", true, false, List.of(), "exit 0"));
      Process p = nsjailProcess(List.of(), binary, config).redirectErrorStream(true).start();
      String output = new String(p.getInputStream().readNBytes(4096), StandardCharsets.UTF_8);
      boolean exited = p.waitFor(10, TimeUnit.SECONDS);
      Files.deleteIfExists(config);
      if (!exited || p.exitValue() != 0) {
        p.destroyForcibly();
        return new BackendStatus(
            name(),
            false,
            "nsjail cannot create a jail here: " + NamespaceHost.oneLine(output),
            enforced);
      }
    } catch (IOException e) {
      return new BackendStatus(
          name(), false, "nsjail failed to start: " + e.getMessage(), enforced);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new BackendStatus(name(), false, "interrupted while probing nsjail", enforced);
    }
    return new BackendStatus(
        name(),
        true,
        "nsjail " + binary,
        enforced,
        Set.of(BoxCapabilities.READ_ONLY_ROOTFS, BoxCapabilities.PROCESS_MEMORY_LIMIT));
  }

  private String configText(
      String name,
      boolean readOnlyRoot,
      boolean networkOn,
      List<SandboxMount> mounts,
      String command) {
    return JailConfig.render(
        name,
        sandboxUid,
        readOnlyRoot,
        networkOn,
        etcDir,
        guard,
        SyscallGuard.SANDBOX_PATH,
        mounts,
        setpriv,
        command);
  }

  /**
   * nsjail with the configuration file {@code config}, started through {@code prefix}; nothing else
   * is on its command line.
   */
  private static ProcessBuilder nsjailProcess(List<String> prefix, Path binary, Path config) {
    List<String> argv = new ArrayList<>(prefix);
    argv.addAll(List.of(binary.toString(), "--config", config.toString()));
    ProcessBuilder builder = new ProcessBuilder(argv);
    builder.environment().clear();
    builder.environment().put("PATH", "/usr/bin:/bin");
    builder.directory(Path.of("/").toFile());
    return builder;
  }

  @Override
  public Sandbox start(SandboxSpec spec) {
    Path binary = nsjail;
    Launcher spawnLauncher = launcher;
    Path nsenterPath = nsenter;
    if (!status.available() || binary == null || spawnLauncher == null || nsenterPath == null) {
      throw new BoxException(
          BoxErrorCode.BACKEND_UNAVAILABLE, "nsjail backend is unavailable: " + status.reason());
    }
    boolean networkOn = spec.network() == BoxNetworkMode.ON;
    Path slirp = slirp4netns;
    if (networkOn && (slirp == null || !firewall.available())) {
      throw new BoxException(
          BoxErrorCode.BACKEND_UNAVAILABLE,
          "network on is unavailable on this server: the sandbox could not be kept off the host"
              + " (egress: "
              + NamespaceHost.networkStatus(slirp4netns, firewall)
              + ")");
    }
    MountOwnership.prepare(spec, workspaces, sandboxUid);
    CgroupDriver.SessionCgroup cgroup =
        cgroups.createSession(spec.sandboxName(), spec.memoryMb(), spec.pidsLimit(), spec.cpus());
    Path config = jailsDir.resolve(spec.sandboxName() + ".cfg");
    Process process = null;
    Process network = null;
    try {
      Files.createDirectories(jailsDir);
      Files.writeString(
          config,
          configText(
              baseName + "/" + spec.sandboxName(),
              spec.readOnlyRootfs(),
              networkOn,
              JailConfig.mountsOf(spec.workspace(), spec.extraMounts()),
              JailConfig.HOLDER));
      // nsjail dies with this server, as bwrap does (--die-with-parent), and its jail with it.
      ProcessBuilder builder =
          nsjailProcess(List.of(setpriv.toString(), "--pdeathsig", "KILL", "--"), binary, config);
      process = spawner.submit(builder::start).get();
      JailStart.awaitReady(process, readers, START_TIMEOUT);
      long initPid = JailStart.initPid(process);
      IdMaps.forbidNestedNamespaces(nsenterPath, initPid);
      JailStart.maskProc(nsenterPath, initPid);
      if (networkOn && slirp != null) {
        // Before anything of the request runs in the namespace: never a moment without it.
        firewall.apply(
            initPid,
            EgressRuleset.render(
                egress,
                spec.egress(),
                NetnsFirewall.hostAddresses(),
                UserModeNetwork.forbidden(),
                List.of(UserModeNetwork.DNS)));
        network = UserModeNetwork.start(slirp, initPid, readers);
      }
      return new NamespaceSandbox(
          spec.sandboxName(), process, initPid, cgroup, spawnLauncher, network);
    } catch (IOException | ExecutionException | RuntimeException e) {
      abandon(process, network, cgroup);
      if (e instanceof BoxException box) {
        throw box;
      }
      throw new BoxException(
          BoxErrorCode.INTERNAL_ERROR,
          "nsjail backend error: " + NamespaceHost.oneLine(String.valueOf(e)),
          e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      abandon(process, network, cgroup);
      throw new BoxException(
          BoxErrorCode.RUNTIME_UNAVAILABLE, "interrupted while starting a sandbox");
    } finally {
      try {
        Files.deleteIfExists(config);
      } catch (IOException e) {
        log.warn("cannot remove {}: {}", config, e.toString());
      }
    }
  }

  private static void abandon(
      @Nullable Process nsjail, @Nullable Process network, CgroupDriver.SessionCgroup cgroup) {
    if (network != null) {
      UserModeNetwork.stop(network);
    }
    if (nsjail != null) {
      // nsjail's child outlives it: the jail's pid 1 goes first, and its namespace with it.
      nsjail.toHandle().children().forEach(ProcessHandle::destroyForcibly);
      nsjail.destroyForcibly();
    }
    cgroup.destroy();
  }

  @Override
  public void removeOrphans() {
    JailStart.killOthers(baseName, jailsDir, instanceId + "_");
    cgroups.removeOthers(instanceId + "_");
  }

  @Override
  public void close() {
    spawner.shutdownNow();
    readers.shutdownNow();
    cgroups.close();
  }
}
