package dev.box.backend.microvm;

import static java.util.Objects.requireNonNull;

import dev.box.api.BoxCapabilities;
import dev.box.api.BoxEgress;
import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.BoxNetworkMode;
import dev.box.api.time.Ticker;
import dev.box.core.Hashes;
import dev.box.core.agent.AgentAddress;
import dev.box.core.agent.AgentLink;
import dev.box.core.agent.AgentSockets;
import dev.box.core.agent.LinkDeadlines;
import dev.box.core.backend.BackendStatus;
import dev.box.core.backend.PoolLevel;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxBackend;
import dev.box.core.backend.SandboxSpec;
import dev.box.core.net.EgressPolicy;
import dev.box.guard.ExecAgent;
import dev.box.guard.GuestInit;
import dev.box.guard.SyscallGuard;
import dev.box.sandbox.BackendRuntime;
import dev.box.sandbox.IdmappedMounts;
import dev.box.sandbox.NamespaceHost;
import dev.box.sandbox.SandboxShape;
import dev.box.sandbox.engine.EngineClient;
import java.io.IOException;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sessions as QEMU micro-VMs, one per session, each with its own guest kernel (see {@link
 * QemuCommand} for the machine and docs/BACKENDS.md). The guest's init runs box-agent in network
 * mode as the sandbox user under box-guard; the server reaches it through one loopback port that
 * QEMU forwards (the host's; with the network on, that of the VM's own network namespace, through a
 * relay's Unix socket: {@link VmNetwork}), with a secret of the VM's own, and every process,
 * timeout kill and file operation goes through that link, as on the kubernetes backend. Destroying
 * a session kills its QEMU: every process of the session ends with its kernel.
 */
public final class MicrovmBackend implements SandboxBackend {
  private static final Logger log = LoggerFactory.getLogger(MicrovmBackend.class);

  /** How long the agent may take to answer a request: the guest runs under TCG. */
  private static final Duration REPLY_TIMEOUT = Duration.ofSeconds(10);

  /** How long a VM may take from QEMU's start to the agent's hello. */
  private static final Duration BOOT_TIMEOUT = Duration.ofSeconds(90);

  /** The file in a pooled VM's directory that names the session which took it. */
  public static final String TAKEN_BY = "taken-by";

  /** How long one attempt to reach the agent may take while the guest boots. */
  private static final Duration DIAL_ATTEMPT = Duration.ofSeconds(1);

  private static final Map<String, String> ENFORCED =
      Map.ofEntries(
          Map.entry(
              "memory",
              "the guest's memory cgroup around the agent and every process of the session"
                  + " (memory.max, no swap); the VM's RAM is that and "
                  + GuestConfig.HEADROOM_MB
                  + " MiB for the guest kernel"),
          Map.entry("pids", "the guest's pids cgroup around the agent and the session (pids.max)"),
          Map.entry(
              "network",
              "off: the session's processes in a network namespace with only loopback (box-guard"
                  + " --net-off in the guest); the agent's own card is on QEMU's user network with"
                  + " restrict=on (no way out of the VM), only its port forwarded from host"
                  + " loopback; on: the session's processes on the guest's card, QEMU's user"
                  + " network without restrict, QEMU in a network namespace of its own behind the"
                  + " egress firewall (see egress) with slirp4netns as its way out, so QEMU's"
                  + " gateway is that namespace's loopback; the agent's port forwarded there only,"
                  + " reached through a relay's Unix socket (no host port); a VM of its own, never"
                  + " a pooled one"),
          Map.entry("timeout", "kill (the guest's agent ends the whole tree)"),
          Map.entry("output", "bounded"),
          Map.entry(
              "host_mounts",
              "host_path, extra_mounts and a persistent session's workspace over virtio-9p, QEMU"
                  + " (the sandbox uid) serving each in its none model, ro ones readonly=on and"
                  + " mounted read-only by the guest: what the sandbox writes lands on the host as"
                  + " the sandbox uid's; a read-only folder only its owner can read through an"
                  + " idmapped mount, a writable one refused; any other session's workspace lives"
                  + " in the VM's writable layer"),
          Map.entry("seccomp", SyscallGuard.POLICY));

  private final Path vmsDir;
  private final Path workspaces;
  private final int sandboxUid;
  private final GuestConfig pooled;
  private final ShareMounts mounts;
  private final VmCgroups cgroups;
  private final @Nullable QemuJail jail = QemuJail.onHost();
  private final Path initramfs;
  private final @Nullable MicrovmFiles files;
  private final String reason;
  private final Ticker ticker;
  private final ExecutorService launcher;
  private final ScheduledExecutorService timers;
  private final VmNetwork.Host network;
  private final Path relaySockets;
  private @Nullable Path relay;
  private final SecureRandom random = new SecureRandom();
  private final Map<String, Vm> running = new ConcurrentHashMap<>();

  /**
   * The VMs whose directory exists but which are not running yet: {@link #removeOrphans} must not
   * take them for an earlier server's (the pool boots while the server removes what a crashed one
   * left).
   */
  private final Set<String> starting = ConcurrentHashMap.newKeySet();

  private final VmPool pool;
  private final KvmProbe.Decision acceleration;
  private final MicrovmImages imageSource;

  /** The roots of sessions' images, or null when no engine serves them. */
  private final @Nullable ImageRoots images;

  private final @Nullable EngineClient engine;

  /** What the health report says of images. */
  private final String imagesStatus;

  /** The saved template the pool's VMs restore from, or null when there can be none. */
  private final @Nullable VmState saved;

  private volatile boolean closed;

  /**
   * @param stateDir the server's state directory: VMs live under {@code microvm/} in it
   * @param filesDir the directory {@code scripts/microvm} prepared ({@link MicrovmFiles})
   * @param runtime the clock and the threads of the backend
   * @param poolSize how many VMs of the pooled memory size wait, booted, for their sessions
   * @param egress the operator's egress policy for network-on VMs
   * @param sandboxUid the host uid (and gid) QEMU runs as, and the sandbox user's in the guest
   */
  public MicrovmBackend(
      Path stateDir,
      Path filesDir,
      BackendRuntime runtime,
      int poolSize,
      EgressPolicy egress,
      int sandboxUid) {
    this(stateDir, filesDir, runtime, poolSize, egress, sandboxUid, MicrovmImages.none());
  }

  /**
   * A backend that boots each session of an image other than the default from that image's root,
   * exported from the engine {@code images} names ({@link ImageRoots}); see the other constructor.
   */
  public MicrovmBackend(
      Path stateDir,
      Path filesDir,
      BackendRuntime runtime,
      int poolSize,
      EgressPolicy egress,
      int sandboxUid,
      MicrovmImages images) {
    Path root = stateDir.toAbsolutePath().normalize().resolve("microvm");
    this.vmsDir = root.resolve("vms");
    this.workspaces = stateDir.toAbsolutePath().normalize().resolve("workspaces");
    this.sandboxUid = sandboxUid;
    // What the pool's VMs are booted with: the limits a session that names none gets, and the
    // workspace in the VM's writable layer.
    this.pooled =
        new GuestConfig(
            SandboxShape.pooled().memoryMb(),
            SandboxShape.pooled().pidsLimit(),
            SandboxShape.pooled().cpus(),
            sandboxUid,
            List.of(),
            false);
    this.initramfs = root.resolve("initramfs.cpio");
    this.ticker = runtime.ticker();
    this.launcher = runtime.singleThread("microvm-launcher");
    this.timers = runtime.timer("microvm-timeouts");
    this.network = VmNetwork.Host.probe(egress, runtime.cachedThreads("microvm-readers"));
    this.relaySockets = AgentSockets.root(stateDir);
    this.cgroups =
        VmCgroups.of(
            NamespaceHost.probeCgroups(
                "box-microvm-" + Hashes.shortSha256(root.toString()), runtime.ticker()),
            random);
    MicrovmFiles found = null;
    String why;
    KvmProbe.Decision decision = new KvmProbe.Decision(KvmProbe.Accel.TCG, "no VMs");
    this.mounts = ShareMounts.start(stateDir);
    try {
      found = MicrovmFiles.read(filesDir);
      writeInitramfs(stateDir, found);
      decision = accelerationFor(found, filesDir, root);
      why =
          "QEMU micro-VMs (microvm machine, "
              + decision.accel()
              + ") of "
              + found.kernel().getFileName()
              + " from "
              + filesDir;
    } catch (IOException e) {
      found = null;
      why = e.getMessage();
    }
    this.acceleration = decision;
    this.files = found;
    this.reason = String.valueOf(why);
    this.imageSource = images;
    Path socket = images.engineSocket();
    EngineClient client = null;
    ImageRoots roots = null;
    String imagesWhy;
    if (found == null) {
      imagesWhy = "none: the backend is unavailable";
    } else if (socket == null) {
      imagesWhy = "none: no container engine's socket; every VM boots the default root";
    } else {
      client = new EngineClient(socket, runtime);
      try {
        roots =
            new ImageRoots(
                client,
                socket,
                filesDir.resolve("images"),
                ImageRoots.mkfs(),
                images.maxMb() << 20);
        roots.prepare();
        imagesWhy =
            "the session's image, exported once from the engine at "
                + socket
                + " into a read-only root disk (at most "
                + images.maxMb()
                + " MiB) that its VMs share; the default image boots the default root";
      } catch (IOException | RuntimeException e) {
        roots = null;
        client.close();
        client = null;
        imagesWhy = "none: the engine at " + socket + " cannot export images: " + e.getMessage();
      }
    }
    this.engine = client;
    this.images = roots;
    this.imagesStatus = imagesWhy;
    this.saved = found == null ? null : savedState(root, found, decision.accel());
    this.pool =
        new VmPool(
            found == null ? 0 : poolSize,
            name -> startPooled(requireNonNull(files), name),
            booted -> destroy(booted.name(), booted.vm(), booted.link()));
    pool.fill();
  }

  /**
   * KVM where a test boot under it reaches the agent ({@link KvmProbe}), else TCG; the outcome kept
   * beside the VMs' files, or in the state dir when those are not writable.
   */
  private KvmProbe.Decision accelerationFor(MicrovmFiles found, Path filesDir, Path root)
      throws IOException {
    Files.createDirectories(root);
    Path keptIn = (Files.isWritable(filesDir) ? filesDir : root).resolve(KvmProbe.FILE);
    Path kvm = Path.of("/dev/kvm");
    String noKvm = kvmDenied(kvm);
    if (noKvm != null) {
      return new KvmProbe.Decision(KvmProbe.Accel.TCG, noKvm);
    }
    try {
      return KvmProbe.decide(
          found,
          kvm,
          keptIn,
          () -> {
            String name = "kvm-probe-" + HexFormat.of().formatHex(random.generateSeed(6));
            VmPool.Booted probe =
                boot(found, name, KvmProbe.Accel.KVM, pooled, BoxEgress.NONE, KvmProbe.TIMEOUT);
            destroy(name, probe.vm(), probe.link());
          });
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new KvmProbe.Decision(KvmProbe.Accel.TCG, "interrupted before KVM was tried");
    }
  }

  private @Nullable VmState savedState(Path root, MicrovmFiles found, KvmProbe.Accel accel) {
    try {
      return new VmState(
          root.resolve("saved"),
          VmState.key(found, initramfs, pooled, accel),
          sandboxUid,
          timers,
          Clock.systemUTC());
    } catch (IOException e) {
      log.warn("no saved VM state: the pool boots its VMs: {}", e.toString());
      return null;
    }
  }

  /**
   * A VM of the pool's limits: restored from the saved template (made first when there is none), or
   * when that cannot be, booted; a restore that fails discards the file and boots.
   */
  private VmPool.Booted startPooled(MicrovmFiles found, String name)
      throws IOException, InterruptedException {
    VmState state = saved;
    Path file = state == null ? null : state.ensure(into -> saveTemplate(found, state, into));
    if (state != null && file != null) {
      try {
        long started = ticker.read();
        VmPool.Booted booted =
            start(found, name, acceleration.accel(), pooled, BoxEgress.NONE, BOOT_TIMEOUT, file);
        state.restored((ticker.read() - started) / 1_000_000);
        return booted;
      } catch (IOException e) {
        if (closed) {
          throw e; // killed by close, not a state that fails
        }
        state.discard(String.valueOf(e.getMessage()));
      }
    }
    return boot(found, name, pooled, BoxEgress.NONE, BOOT_TIMEOUT);
  }

  /** Boots a template VM, saves it into {@code into} and destroys it. */
  private void saveTemplate(MicrovmFiles found, VmState state, Path into)
      throws IOException, InterruptedException {
    String name = "template-" + HexFormat.of().formatHex(random.generateSeed(6));
    Vm vm = null;
    try {
      long started = ticker.read();
      vm =
          launch(
              found,
              name,
              pooled,
              new byte[AgentAddress.SECRET_BYTES],
              acceleration.accel(),
              dir -> {
                throw new IOException("a template has no network");
              },
              QemuCommand.Start.TEMPLATE,
              null);
      // A state is the guest's memory and the devices' few megabytes: more is not a state.
      state.save(vm, into, (pooled.vmMemoryMb() + 64L) * 1024 * 1024, BOOT_TIMEOUT);
      log.info(
          "template VM {} booted and saved in {} ms", name, (ticker.read() - started) / 1_000_000);
    } finally {
      destroy(name, vm, null);
    }
  }

  /**
   * Starts the VM {@code name} ({@link Vm#start}) and counts it as running; while it starts it is
   * one of {@link #starting}, which {@link #removeOrphans} leaves alone.
   */
  private Vm launch(
      MicrovmFiles found,
      String name,
      GuestConfig config,
      byte[] secret,
      KvmProbe.Accel accel,
      VmNetwork.Opener network,
      QemuCommand.Start start,
      @Nullable Path state)
      throws IOException {
    starting.add(name);
    try {
      Vm vm =
          Vm.start(
              found,
              vmsDir.resolve(name),
              initramfs,
              config,
              secret,
              accel,
              launcher,
              network,
              mounts,
              cgroups,
              jail,
              start,
              state);
      running.put(name, vm);
      return vm;
    } finally {
      starting.remove(name);
    }
  }

  /**
   * Why QEMU, which runs as the sandbox uid with no supplementary group, cannot open {@code kvm}
   * for reading and writing, or null when it can (or when there is none: the probe says so).
   */
  private @Nullable String kvmDenied(Path kvm) {
    try {
      int owner = (Integer) Files.getAttribute(kvm, "unix:uid");
      int group = (Integer) Files.getAttribute(kvm, "unix:gid");
      int mode = (Integer) Files.getAttribute(kvm, "unix:mode") & 0777;
      int bits = owner == sandboxUid ? mode >> 6 : group == sandboxUid ? mode >> 3 : mode;
      if ((bits & 06) == 06) {
        return null;
      }
      return "QEMU runs as uid %d with no supplementary group, to which %s (owner uid %d, group %d,"
              .formatted(sandboxUid, kvm, owner, group)
          + " mode %04o) grants no read-write access".formatted(mode);
    } catch (IOException | UnsupportedOperationException e) {
      return null;
    }
  }

  /**
   * The directory of the VMs' files: {@code env} (the value of {@code BOX_MICROVM_CACHE}, as {@code
   * scripts/microvm} reads it), else the script's default.
   */
  public static Path filesDir(@Nullable String env) {
    return MicrovmFiles.dir(env);
  }

  private void writeInitramfs(Path stateDir, MicrovmFiles found) throws IOException {
    byte[] init = GuestInit.bytes();
    SyscallGuard guard = SyscallGuard.install(stateDir);
    ExecAgent agent = ExecAgent.install(stateDir);
    Path guardBinary = guard.binary();
    Path agentBinary = agent.binary();
    if (init == null || guardBinary == null || agentBinary == null) {
      throw new IOException(
          "this build has no guest init, box-guard or box-agent for this arch: "
              + guard.reason()
              + "; "
              + agent.reason());
    }
    Files.createDirectories(initramfs.getParent());
    Initramfs.write(initramfs, init, found.modules(), guardBinary, agentBinary);
    // The same static box-agent is the relay of network-on VMs on the host.
    this.relay = agentBinary;
  }

  @Override
  public String name() {
    return "microvm";
  }

  @Override
  public BackendStatus status() {
    Map<String, String> enforced = new TreeMap<>(ENFORCED);
    enforced.put("cpu", cgroups.cpuEnforced());
    PoolLevel level = pool.level();
    enforced.put(
        "pool",
        level.size() == 0
            ? "none: pool_size is 0"
            : level.idle()
                + " of "
                + level.size()
                + " VMs booted and idle ("
                + pooled.memoryMb()
                + " MiB, "
                + pooled.pidsLimit()
                + " pids: a session of other limits boots its own)");
    VmState state = saved;
    enforced.put(
        "vm_state",
        state == null
            ? "none: every VM boots"
            : "VMs of the pool's limits restore from a saved VM state: " + state.status());
    enforced.put("isolation", "vm (" + acceleration.accel().name().toLowerCase(Locale.ROOT) + ")");
    enforced.put("acceleration", acceleration.why());
    enforced.put("egress", network.status());
    enforced.put("qemu", QemuJail.enforced(jail, sandboxUid));
    enforced.put("sandbox_uid", Integer.toString(sandboxUid));
    enforced.put("images", imagesStatus);
    String noShares = mounts.unavailable();
    enforced.put(
        IdmappedMounts.HEALTH_KEY,
        noShares == null ? "read-only folders only" : "false: " + noShares);
    Set<String> capabilities = new HashSet<>();
    if (noShares == null) {
      capabilities.add(BoxCapabilities.HOST_PATHS);
    }
    if (images != null) {
      capabilities.add(BoxCapabilities.IMAGES);
    }
    return new BackendStatus(name(), files != null, reason, enforced, capabilities);
  }

  @Override
  public Sandbox start(SandboxSpec spec) {
    MicrovmFiles found = files;
    if (found == null) {
      throw new BoxException(
          BoxErrorCode.BACKEND_UNAVAILABLE, "the microvm backend is unavailable: " + reason);
    }
    boolean networkOn = spec.network() == BoxNetworkMode.ON;
    if (networkOn && !network.available()) {
      throw new BoxException(
          BoxErrorCode.BACKEND_UNAVAILABLE,
          "network on is unavailable on this server: the VM could not be kept off the host"
              + " (egress: "
              + network.status()
              + ")");
    }
    GuestConfig config =
        new GuestConfig(
            spec.memoryMb(),
            spec.pidsLimit(),
            spec.cpus(),
            sandboxUid,
            VmShares.of(spec, workspaces, sandboxUid, mounts.unavailable()),
            networkOn);
    VmPool.Booted booted;
    try {
      Path imageRoot = imageRoot(spec);
      // A network-on config never equals the pooled one: such a session boots a VM of its own, as
      // does one of an image of its own (the pool's VMs boot the default root).
      boolean likePooled = imageRoot == null && config.equals(pooled);
      booted = likePooled ? pool.take() : null;
      if (booted == null && likePooled) {
        // The pool is empty or off: a VM like the pool's restores all the same.
        booted = startPooled(found, spec.sandboxName());
      } else if (booted == null) {
        MicrovmFiles vmFiles = imageRoot == null ? found : found.withRootfs(imageRoot);
        booted = boot(vmFiles, spec.sandboxName(), config, spec.egress(), BOOT_TIMEOUT);
      } else {
        log.debug("session {} takes the booted VM {}", spec.sessionId(), booted.name());
        markTaken(booted, spec.sessionId());
      }
    } catch (IOException e) {
      throw new BoxException(
          BoxErrorCode.RUNTIME_UNAVAILABLE,
          "cannot start the VM of session " + spec.sessionId() + ": " + e.getMessage(),
          e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new BoxException(BoxErrorCode.RUNTIME_UNAVAILABLE, "interrupted while starting", e);
    }
    return new MicrovmSandbox(booted.name(), booted.link(), booted.vm(), running::remove);
  }

  /**
   * The root disk of the spec's image, made now if need be; null for the default root: the spec
   * names the default image, or no engine serves images.
   */
  private @Nullable Path imageRoot(SandboxSpec spec) throws IOException, InterruptedException {
    ImageRoots roots = images;
    if (roots == null || imageSource.isDefault(spec.image())) {
      return null;
    }
    try {
      return roots.rootOf(spec.image());
    } catch (IOException e) {
      throw new IOException(
          "cannot make the root disk of image " + spec.image() + ": " + e.getMessage(), e);
    }
  }

  /**
   * Writes which session took the pooled VM into its directory, so that one can tell from outside a
   * VM that waits in the pool from one that serves a session; a VM that cannot be marked is not
   * handed out.
   */
  private void markTaken(VmPool.Booted booted, String sessionId) throws IOException {
    try {
      Files.writeString(booted.vm().dir().resolve(TAKEN_BY), sessionId + "\n");
    } catch (IOException e) {
      destroy(booted.name(), booted.vm(), booted.link());
      throw e;
    }
  }

  private VmPool.Booted boot(
      MicrovmFiles found, String name, GuestConfig config, BoxEgress egress, Duration timeout)
      throws IOException, InterruptedException {
    return boot(found, name, acceleration.accel(), config, egress, timeout);
  }

  /**
   * Boots the VM {@code name} to its agent within {@code timeout}, with the network on behind the
   * firewall with {@code egress}'s rules; on failure nothing of it is left.
   */
  private VmPool.Booted boot(
      MicrovmFiles found,
      String name,
      KvmProbe.Accel accel,
      GuestConfig config,
      BoxEgress egress,
      Duration timeout)
      throws IOException, InterruptedException {
    return start(found, name, accel, config, egress, timeout, null);
  }

  /**
   * Boots the VM {@code name}, or restores it from the saved state {@code restoreFrom} and sends
   * its go, to its agent within {@code timeout}; on failure nothing of it is left.
   */
  private VmPool.Booted start(
      MicrovmFiles found,
      String name,
      KvmProbe.Accel accel,
      GuestConfig config,
      BoxEgress egress,
      Duration timeout,
      @Nullable Path restoreFrom)
      throws IOException, InterruptedException {
    byte[] secret = new byte[AgentAddress.SECRET_BYTES];
    random.nextBytes(secret);
    Vm vm = null;
    try {
      long started = ticker.read();
      vm =
          launch(
              found,
              name,
              config,
              secret,
              accel,
              dir ->
                  VmNetwork.open(
                      network,
                      requireNonNull(relay),
                      dir,
                      VmNetwork.socketFor(relaySockets, name),
                      egress,
                      launcher),
              restoreFrom == null ? QemuCommand.Start.BOOT : QemuCommand.Start.RESTORE,
              restoreFrom);
      AgentLink link;
      if (restoreFrom == null) {
        link = awaitAgent(name, vm, secret, timeout);
      } else {
        try (SocketChannel go = requireNonNull(saved).resume(vm, timeout)) {
          link = awaitAgent(name, vm, secret, timeout);
        }
      }
      log.info(
          "VM {} {} to its agent in {} ms",
          name,
          restoreFrom == null ? "booted" : "restored",
          (ticker.read() - started) / 1_000_000);
      return new VmPool.Booted(name, vm, link);
    } catch (IOException | InterruptedException | RuntimeException e) {
      destroy(name, vm, null);
      throw e;
    }
  }

  private void destroy(String name, @Nullable Vm vm, @Nullable AgentLink link) {
    if (link != null) {
      link.close();
    }
    if (vm != null) {
      vm.destroy();
    }
    running.remove(name);
  }

  /**
   * Dials the guest's agent until it says hello: QEMU accepts on the forwarded port at once and
   * closes the connection while nothing listens in the guest, so each attempt is short and the next
   * follows until the boot's deadline, or until QEMU ends.
   */
  private AgentLink awaitAgent(String name, Vm vm, byte[] secret, Duration timeout)
      throws IOException, InterruptedException {
    AgentAddress address = new AgentAddress(vm.agent(), secret);
    long deadline = ticker.read() + timeout.toNanos();
    while (true) {
      if (!vm.alive()) {
        throw new IOException("the VM ended while it booted: " + vm.whyEnded());
      }
      AgentLink link = AgentLink.dial(name, address, new LinkDeadlines(REPLY_TIMEOUT, timers));
      try {
        link.awaitAgent(DIAL_ATTEMPT, vm::destroy);
        return link;
      } catch (IOException e) {
        link.close();
        if (ticker.read() - deadline > 0) {
          throw new IOException(
              "the VM's agent did not answer within "
                  + timeout.toSeconds()
                  + " s: "
                  + vm.whyEnded(),
              e);
        }
        Thread.sleep(100);
      }
    }
  }

  /**
   * Removes the directories of VMs this backend does not run (an earlier server's: its QEMUs died
   * with it), and their relays' sockets.
   */
  @Override
  public void removeOrphans() {
    removeOrphanRelaySockets();
    cgroups.removeOthers();
    if (!Files.isDirectory(vmsDir)) {
      return;
    }
    try (Stream<Path> dirs = Files.list(vmsDir)) {
      for (Path dir : dirs.toList()) {
        String name = dir.getFileName().toString();
        if (!running.containsKey(name) && !starting.contains(name)) {
          Vm.remove(dir, mounts);
        }
      }
    } catch (IOException e) {
      log.warn("cannot remove the VMs left under {}: {}", vmsDir, e.toString());
    }
  }

  /** Removes the relay sockets of VMs this backend does not run. */
  private void removeOrphanRelaySockets() {
    if (!Files.isDirectory(relaySockets)) {
      return;
    }
    Set<Path> ours = new HashSet<>();
    running.keySet().forEach(name -> ours.add(VmNetwork.socketFor(relaySockets, name)));
    starting.forEach(name -> ours.add(VmNetwork.socketFor(relaySockets, name)));
    try (Stream<Path> sockets = Files.list(relaySockets)) {
      for (Path socket : sockets.toList()) {
        String file = socket.getFileName().toString();
        if (file.startsWith(VmNetwork.SOCKET_PREFIX) && !ours.contains(socket)) {
          Files.deleteIfExists(socket);
        }
      }
    } catch (IOException e) {
      log.warn("cannot remove the relay sockets left under {}: {}", relaySockets, e.toString());
    }
  }

  @Override
  public PoolLevel poolLevel() {
    return pool.level();
  }

  /** The QEMU process ids of the running VMs, by VM name. */
  Map<String, Long> pids() {
    Map<String, Long> pids = new HashMap<>();
    running.forEach((name, vm) -> pids.put(name, vm.process().pid()));
    return pids;
  }

  /**
   * Kills every VM still running (the runtime destroyed the sessions before) and stops the threads.
   */
  @Override
  public void close() {
    closed = true;
    pool.close();
    running.forEach((name, vm) -> destroy(name, vm, null));
    launcher.shutdownNow();
    timers.shutdownNow();
    network.readers().shutdownNow();
    mounts.close();
    cgroups.driver().close();
    if (engine != null) {
      engine.close();
    }
  }
}
