package dev.box.backend.microvm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.box.api.BoxEgress;
import dev.box.api.BoxNetworkMode;
import dev.box.api.BoxValidationException;
import dev.box.api.Cidr;
import dev.box.core.backend.ProcessSpec;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxMount;
import dev.box.core.backend.SandboxProcess;
import dev.box.core.backend.SandboxSpec;
import dev.box.core.net.EgressPolicy;
import dev.box.core.net.NetnsFirewall;
import dev.box.guard.GuestInit;
import dev.box.sandbox.BackendRuntime;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * The backend with a real VM: QEMU boots the guest kernel (TCG) with the initramfs the backend
 * writes, and every process runs through the guest's agent. One VM serves the whole class (a boot
 * takes seconds under TCG); the last test destroys it. Needs what {@code scripts/microvm} prepares
 * ({@code BOX_MICROVM_CACHE} or its default directory); without it the class is skipped.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class MicrovmBackendTest {
  /** The host uid QEMU runs as, and the sandbox user's in the guest: the server's default. */
  static final int SANDBOX_UID = 2_000_000;

  private Path state;
  private @Nullable Sandbox withFolders;
  private MicrovmBackend backend;
  private Sandbox sandbox;

  @BeforeAll
  void boot(@TempDir Path state) {
    this.state = state;
    Path files = MicrovmFiles.dir(System.getenv("BOX_MICROVM_CACHE"));
    assumeTrue(
        Files.isRegularFile(files.resolve(MicrovmFiles.MANIFEST)),
        "no micro-VM files in " + files + ": run scripts/microvm");
    backend =
        new MicrovmBackend(
            state, files, BackendRuntime.system(), 0, EgressPolicy.DEFAULT, SANDBOX_UID);
    assertThat(backend.status().available()).as(backend.status().reason()).isTrue();
    // KVM only where a test boot under it worked; the health report says which, and why.
    assertThat(backend.status().enforced().get("isolation")).matches("vm \\((kvm|tcg)\\)");
    assertThat(backend.status().enforced().get("acceleration")).isNotBlank();
    sandbox = backend.start(spec("s1", BoxNetworkMode.OFF, 256));
  }

  @AfterAll
  void stop() {
    if (backend != null) {
      backend.close();
    }
  }

  static SandboxSpec spec(String session, BoxNetworkMode network, int memoryMb) {
    return spec(session, network, memoryMb, 64);
  }

  static SandboxSpec spec(String session, BoxNetworkMode network, int memoryMb, int pidsLimit) {
    return spec(session, network, memoryMb, pidsLimit, 1);
  }

  static SandboxSpec spec(
      String session, BoxNetworkMode network, int memoryMb, int pidsLimit, double cpus) {
    return new SandboxSpec(
        session,
        "i_" + session,
        "i",
        "ignored",
        network,
        null,
        List.of(),
        false,
        cpus,
        memoryMb,
        pidsLimit,
        BoxEgress.NONE,
        false,
        null);
  }

  private SandboxProcess spawn(String script, boolean stdin) {
    return spawn(sandbox, script, stdin);
  }

  private static SandboxProcess spawn(Sandbox in, String script, boolean stdin) {
    return in.spawn(new ProcessSpec(new ProcessSpec.Shell(script), "/workspace", Map.of(), stdin));
  }

  private String run(String script, int exitCode) throws Exception {
    return run(sandbox, script, exitCode);
  }

  private static String run(Sandbox in, String script, int exitCode) throws Exception {
    SandboxProcess p = spawn(in, script, false);
    String out = new String(p.stdout().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(Duration.ofSeconds(60))).hasValue(exitCode);
    p.release();
    return out;
  }

  @Test
  @Order(1)
  void aProcessRunsInTheGuest_asTheSandboxUser_underItsOwnKernel() throws Exception {
    String hostKernel = Files.readString(Path.of("/proc/sys/kernel/osrelease")).strip();

    assertThat(run("id -u; echo hi > f; cat f; pwd; uname -r", 0))
        .startsWith(SANDBOX_UID + "\nhi\n/workspace\n")
        .doesNotContain(hostKernel);
  }

  @Test
  @Order(2)
  void exitCodesAndStderr_comeBackAsTheCommandGaveThem() throws Exception {
    SandboxProcess p = spawn("echo oops >&2; exit 7", false);

    assertThat(new String(p.stderr().readAllBytes(), StandardCharsets.UTF_8)).isEqualTo("oops\n");
    assertThat(p.waitFor(Duration.ofSeconds(60))).hasValue(7);
    assertThat(run("python3 -c 'import sys; sys.exit(3)'", 3)).isEmpty();
  }

  @Test
  @Order(3)
  void stdin_reachesTheProcess() throws Exception {
    SandboxProcess p = spawn("tr a-z A-Z", true);
    try (OutputStream in = p.stdin()) {
      in.write("hello vm\n".getBytes(StandardCharsets.UTF_8));
    }

    assertThat(new String(p.stdout().readAllBytes(), StandardCharsets.UTF_8))
        .isEqualTo("HELLO VM\n");
    assertThat(p.waitFor(Duration.ofSeconds(60))).hasValue(0);
  }

  @Test
  @Order(4)
  void killingATree_endsEveryProcessOfIt_andTheVmGoesOn() throws Exception {
    SandboxProcess p = spawn("sleep 1000 & setsid sleep 1000 & echo started; wait", false);
    assertThat(new String(p.stdout().readNBytes(8), StandardCharsets.UTF_8)).isEqualTo("started\n");

    p.killTree();

    assertThat(p.waitFor(Duration.ofSeconds(60))).isPresent();
    assertThat(run("ps -eo comm | grep -c '^sleep' || true", 0)).isEqualTo("0\n");
  }

  @Test
  @Order(5)
  void theGuestCannotReachTheHostsLoopback_throughQemusNetwork() throws Exception {
    try (ServerSocket host = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      // Without restrict=on, QEMU's user network maps its gateway to its own loopback.
      assertThat(run(connect(List.of(GuestInit.GATEWAY + ":" + host.getLocalPort())), 0))
          .isEqualTo("unreachable\n");
    }
  }

  @Test
  @Order(6)
  void theSessionsProcesses_seeOnlyLoopback() throws Exception {
    assertThat(
            run(
                "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '; tail -n +2 /proc/net/route",
                0))
        .isEqualTo("lo\n");
  }

  /**
   * With the network on the session's processes use the guest's card (they reach the agent on the
   * guest's own address, which a loopback-only namespace could not), with a default route through
   * QEMU's gateway and slirp4netns's resolver; and neither that gateway (the loopback of QEMU's own
   * namespace), nor slirp4netns's gateway, nor any address of the host reaches a listener on all of
   * the host's addresses. What they do reach, and the Box API they do not, {@code
   * MicrovmNetworkEscapeTest} checks against a stand-in internet.
   */
  @Test
  @Order(7)
  void networkOn_usesTheGuestsCard_andReachesNeitherTheHostNorAGateway() throws Exception {
    assertThat(backend.status().enforced().get("egress")).isEqualTo("nftables");
    Sandbox on = backend.start(spec("s2", BoxNetworkMode.ON, 256));
    try (ServerSocket host = new ServerSocket(0, 50)) {
      int port = host.getLocalPort();
      List<String> targets = new ArrayList<>();
      targets.add(GuestInit.GATEWAY + ":" + port);
      targets.add("10.0.2.2:" + port);
      for (Cidr address : NetnsFirewall.hostAddresses()) {
        String text = address.toString().replaceFirst("/32$", "");
        if (address.isIpv4() && !text.startsWith("127.")) {
          targets.add(text + ":" + port);
        }
      }
      targets.add(GuestInit.GUEST_ADDRESS + ":" + GuestInit.AGENT_PORT);

      String out =
          run(
              on,
              "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | sort | tr '\\n' ' '; echo;"
                  + " awk '$2 == \"00000000\" { print $1, $3 }' /proc/net/route;"
                  + " cat /etc/resolv.conf; "
                  + connect(targets),
              0);

      List<String> expected = new ArrayList<>(List.of("eth0 lo ", "eth0 0204000A"));
      expected.addAll(List.of("nameserver 10.0.2.3", "options edns0"));
      targets.subList(0, targets.size() - 1).forEach(t -> expected.add("unreachable"));
      expected.add("connected");
      assertThat(out).as("targets %s", targets).isEqualTo(String.join("\n", expected) + "\n");
    } finally {
      on.destroy();
    }
  }

  /**
   * A Python program that tries each {@code address:port} for 5 s and prints, a line each, {@code
   * connected} or {@code unreachable}.
   */
  private static String connect(List<String> targets) {
    StringBuilder script = new StringBuilder("python3 -c 'import socket\n");
    for (String target : targets) {
      int colon = target.lastIndexOf(':');
      script
          .append("s = socket.socket(); s.settimeout(5)\n")
          .append("try:\n")
          .append("  s.connect((\"")
          .append(target, 0, colon)
          .append("\", ")
          .append(target.substring(colon + 1))
          .append(")); print(\"connected\")\n")
          .append("except OSError:\n")
          .append("  print(\"unreachable\")\n")
          .append("s.close()\n");
    }
    return script.append("'").toString();
  }

  @Test
  @Order(8)
  void theSessionsLimits_areAGuestCgroupTheSandboxUserCannotLift() throws Exception {
    String limits =
        "cat /proc/self/cgroup; cd /sys/fs/cgroup/session; cat memory.max pids.max;"
            + " (echo max > memory.max) 2>/dev/null || echo refused;"
            + " (echo $$ > ../cgroup.procs) 2>/dev/null || echo stays";

    assertThat(run(limits, 0))
        .isEqualTo("0::/session\n" + 256L * 1024 * 1024 + "\n64\nrefused\nstays\n");
  }

  @Test
  @Order(8)
  void theSessionsProcesses_haveAPidNamespaceOfTheirOwn_withoutTheGuestsInitOrKernelThreads()
      throws Exception {
    // kthreadd is PID 2 of every Linux's first pid namespace: only a namespace of the session's
    // own hides it, and the VM's real init with it.
    String script =
        "cat /proc/1/comm; grep -l -x -e kthreadd -e init /proc/[0-9]*/comm || echo hidden";

    assertThat(run(script, 0)).isEqualTo("box-guard\nhidden\n");
  }

  @Test
  @Order(8)
  void cpus_areTheVmsVcpus_andAQuotaOnEveryThreadOfItsQemu() throws Exception {
    assertThat(hostCgroupFile(sandbox, "cpu", "cpu.cfs_quota_us", "cpu.max"))
        .as("the default session's 1 cpu")
        .startsWith("100000");
    Sandbox two = backend.start(spec("c2", BoxNetworkMode.OFF, 256, 64, 1.5));
    try {
      assertThat(run(two, "nproc", 0)).isEqualTo("2\n");
      assertThat(run(two, "sleep 1 && echo slept", 0))
          .as("a timer fires in a VM that booted")
          .isEqualTo("slept\n");
      assertThat(hostCgroupFile(two, "cpu", "cpu.cfs_quota_us", "cpu.max")).startsWith("150000");
      assertThat(hostCgroupFile(two, "memory", "memory.limit_in_bytes", "memory.max"))
          .as("QEMU's own ceiling: the VM's RAM and QEMU's overhead")
          .isEqualTo(
              Long.toString(
                  (256L + GuestConfig.HEADROOM_MB + VmCgroups.QEMU_OVERHEAD_MB) * 1024 * 1024));
      assertThat(backend.status().enforced().get("cpu")).contains("quota of cpus around QEMU");
    } finally {
      two.destroy();
    }
  }

  /**
   * A file of the host cgroup of {@code in}'s QEMU: {@code v1} in {@code controller}'s hierarchy
   * where the host has cgroup v1, else {@code v2} in the unified one. The limits are the VM's
   * cgroup's, the parent of a process group ({@code p<n>}) where the driver nests one.
   */
  private String hostCgroupFile(Sandbox in, String controller, String v1, String v2)
      throws Exception {
    long qemu = qemuOf(in);
    boolean unified = Files.exists(Path.of("/sys/fs/cgroup/cgroup.controllers"));
    for (String line : Files.readAllLines(Path.of("/proc/" + qemu + "/cgroup"))) {
      String[] parts = line.split(":", 3);
      boolean match =
          unified ? parts[1].isEmpty() : List.of(parts[1].split(",")).contains(controller);
      if (match) {
        Path dir = Path.of(unified ? "/sys/fs/cgroup" : "/sys/fs/cgroup/" + parts[1], parts[2]);
        Path parent = dir.getParent();
        if (String.valueOf(dir.getFileName()).matches("p[0-9]+") && parent != null) {
          dir = parent;
        }
        return Files.readString(dir.resolve(unified ? v2 : v1)).strip();
      }
    }
    throw new AssertionError("QEMU " + qemu + " is in no " + controller + " cgroup");
  }

  /** The pid of {@code in}'s QEMU itself, below the bubblewrap the backend knows. */
  private long qemuOf(Sandbox in) throws Exception {
    long started = java.util.Objects.requireNonNull(backend.pids().get(in.id()));
    List<Long> pids = new ArrayList<>(List.of(started));
    ProcessHandle.of(started).ifPresent(h -> h.descendants().forEach(d -> pids.add(d.pid())));
    for (long pid : pids) {
      if (Files.readString(Path.of("/proc/" + pid + "/comm")).startsWith("qemu-system")) {
        return pid;
      }
    }
    throw new AssertionError("no QEMU at or below " + started);
  }

  @Test
  @Order(8)
  void qemu_runsUnprivileged_inNamespacesOfItsOwn_seeingOnlyWhatItOpens() throws Exception {
    long qemu = qemuOf(sandbox);
    Path root = Path.of("/proc/" + qemu + "/root");
    String status = Files.readString(Path.of("/proc/" + qemu + "/status"));

    for (String ns : List.of("pid", "mnt", "ipc", "uts")) {
      assertThat(Files.readSymbolicLink(Path.of("/proc/" + qemu + "/ns/" + ns)))
          .as(ns + " namespace")
          .isNotEqualTo(Files.readSymbolicLink(Path.of("/proc/self/ns/" + ns)));
    }
    assertThat(status)
        .contains("Uid:\t" + SANDBOX_UID + "\t" + SANDBOX_UID)
        .contains("CapEff:\t0000000000000000")
        .contains("NoNewPrivs:\t1")
        .contains("Seccomp:\t2");
    assertThat(root.resolve("usr/bin")).isDirectory();
    assertThat(root.resolve("etc/shadow")).doesNotExist();
    assertThat(root.resolve("home")).doesNotExist();
    assertThat(root.resolve("root")).doesNotExist();
    assertThat(
            root.resolve(
                state.resolve("microvm/vms").resolve(sandbox.id()).toString().substring(1)))
        .as("its VM's directory")
        .isDirectory();
    assertThat(backend.status().enforced().get("qemu")).contains("namespaces of its own");
  }

  @Test
  @Order(9)
  void aPersistentSessionsWorkspace_isItsHostDirectory_whereNoSymlinkLeadsOut(
      @TempDir Path workspace) throws Exception {
    Path hostOnly = Files.writeString(state.resolve("host-only"), "host-only\n");
    Files.createSymbolicLink(workspace.resolve("planted"), hostOnly);
    SandboxSpec persistent =
        new SandboxSpec(
            "p1",
            "i_p1",
            "i",
            "ignored",
            BoxNetworkMode.OFF,
            new SandboxMount(workspace, "/workspace", false, true),
            List.of(),
            false,
            1,
            256,
            64,
            BoxEgress.NONE,
            true,
            null);
    Sandbox kept = backend.start(persistent);
    try {
      // The guest resolves every symlink itself, in its own root; QEMU's 9p server opens each
      // component below the share without following one, so no link leads to a host file.
      String script =
          "echo kept > note; stat -c %u note; ln -s /etc/shadow shadow; ln -s "
              + hostOnly
              + " out; cat shadow 2>/dev/null || echo no-shadow;"
              + " cat planted 2>/dev/null || echo no-host; (echo x > out) 2>/dev/null || echo no-out";

      assertThat(run(kept, script, 0)).isEqualTo(SANDBOX_UID + "\nno-shadow\nno-host\nno-out\n");
      assertThat(Files.readSymbolicLink(workspace.resolve("shadow")))
          .as("the guest's symlink is a symlink on the host, never followed there")
          .isEqualTo(Path.of("/etc/shadow"));
      assertThat(hostOnly).hasContent("host-only\n");
    } finally {
      kept.destroy();
    }
    assertThat(workspace.resolve("note")).as("the file outlives the VM").hasContent("kept\n");
    assertThat((Integer) Files.getAttribute(workspace.resolve("note"), "unix:uid"))
        .as("its host owner")
        .isEqualTo(SANDBOX_UID);
  }

  @Test
  @Order(10)
  void hostFolders_areSharedWithTheirModes_readOnlyOnesRefuseWrites() throws Exception {
    Path host = Files.createDirectory(state.resolve("folders"));
    Path ro = Files.createDirectory(host.resolve("ro"));
    Files.writeString(ro.resolve("in"), "x\n");
    Files.setPosixFilePermissions(ro, PosixFilePermissions.fromString("rwxr-xr-x"));
    Path rw = Files.createDirectory(host.resolve("rw"));
    Files.setPosixFilePermissions(rw, PosixFilePermissions.fromString("rwxrwxrwx"));
    Path ownerOnly = Files.createDirectory(host.resolve("owner-only"));
    Files.writeString(ownerOnly.resolve("secret"), "owner\n");
    Files.setPosixFilePermissions(ownerOnly, PosixFilePermissions.fromString("rwx------"));
    Sandbox vm =
        backend.start(
            spec(
                "h1",
                new SandboxMount(ro, "/workspace", true),
                List.of(
                    new SandboxMount(rw, "/mnt/rw", false),
                    new SandboxMount(ownerOnly, "/mnt/owner-only", true))));
    withFolders = vm;
    String script =
        "cat /workspace/in; (echo y > /workspace/in) 2>/dev/null || echo no-write;"
            + " (touch /workspace/new) 2>/dev/null || echo no-create;"
            + " echo hi > /mnt/rw/out; mkdir /mnt/rw/dir; cat /mnt/owner-only/secret;"
            + " (touch /mnt/owner-only/new) 2>/dev/null || echo no-create";

    assertThat(run(vm, script, 0)).isEqualTo("x\nno-write\nno-create\nowner\nno-create\n");
    assertThat(ro.resolve("in")).hasContent("x\n");
    assertThat(ro.resolve("new")).doesNotExist();
    assertThat(rw.resolve("out")).hasContent("hi\n");
    for (Path made : List.of(rw.resolve("out"), rw.resolve("dir"))) {
      assertThat((Integer) Files.getAttribute(made, "unix:uid")).isEqualTo(SANDBOX_UID);
    }
    assertThat(ownerOnly.resolve("new")).doesNotExist();
  }

  @Test
  @Order(11)
  void destroyingAVmWithFolders_detachesThem_andLeavesTheirFiles() {
    Sandbox vm = withFolders;
    assumeTrue(vm != null, "the VM of host folders did not start");
    Path dir = state.resolve("microvm/vms").resolve(vm.id());
    assertThat(dir.resolve("shares/0")).isDirectory();

    vm.destroy();

    assertThat(dir).doesNotExist();
    assertThat(mountInfo()).doesNotContain(dir.toString());
    assertThat(state.resolve("folders/rw/out")).hasContent("hi\n");
  }

  private static String mountInfo() {
    try {
      return Files.readString(Path.of("/proc/self/mountinfo"));
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  @Test
  @Order(12)
  void aWritableFolderOnlyItsOwnerCanWrite_isRefused_namingItsOwnerAndMode(@TempDir Path host)
      throws Exception {
    Path ownerOnly = Files.createDirectory(host.resolve("owner-only"));
    Files.setPosixFilePermissions(ownerOnly, PosixFilePermissions.fromString("rwx------"));

    assertThatThrownBy(
            () ->
                backend.start(
                    spec("h2", null, List.of(new SandboxMount(ownerOnly, "/mnt/owner", false)))))
        .isInstanceOf(BoxValidationException.class)
        .hasMessageStartingWith("host_path " + ownerOnly + " (owner uid 0, group 0, mode 0700)")
        .hasMessageContaining(VmShares.NO_WRITABLE_IDMAP);
    assertThat(backend.pids()).containsOnlyKeys(sandbox.id());
  }

  static SandboxSpec spec(
      String session, @Nullable SandboxMount workspace, List<SandboxMount> extras) {
    return spec(session, BoxNetworkMode.OFF, 256).withMounts(workspace, extras);
  }

  @Test
  @Order(20)
  void destroy_killsQemuAndRemovesTheVmsFiles() {
    long pid = java.util.Objects.requireNonNull(backend.pids().get(sandbox.id()));
    Path dir = state.resolve("microvm/vms").resolve(sandbox.id());
    assertThat(dir).isDirectory();

    sandbox.destroy();

    assertThat(ProcessHandle.of(pid).filter(ProcessHandle::isAlive)).isEmpty();
    assertThat(dir).doesNotExist();
    assertThat(backend.pids()).isEmpty();
  }
}
