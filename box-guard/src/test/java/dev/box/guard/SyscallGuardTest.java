package dev.box.guard;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real helper on this host. The tests run as root (as Box's tests do), so the filtered process
 * is made unprivileged with {@code --uid 65534 --gid 65534}, except where root shows that the
 * filter, not a missing privilege, refuses a call.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SyscallGuardTest {
  private static final List<String> NOBODY = List.of("--uid", "65534", "--gid", "65534");

  /**
   * Calls that root may make without a filter but must not make with it (safe arguments), set-id
   * modes included: no capability of a sandbox's root may give a file one.
   */
  private static final List<String> PRIVILEGED =
      Stream.concat(
              AttackProgram.SET_ID.stream(),
              Stream.of(
                  "unshare_user",
                  "unshare_net",
                  "mount_tmpfs",
                  "umount2",
                  "pivot_root",
                  "setns",
                  "chroot",
                  "bpf",
                  "kexec_load",
                  "init_module",
                  "finit_module",
                  "delete_module",
                  "swapon",
                  "reboot",
                  "acct",
                  "clock_settime",
                  "syslog",
                  "quotactl"))
          .toList();

  /** Calls the filter refuses with EPERM whoever makes them: the {@link #PRIVILEGED} ones too. */
  private static final List<String> REFUSED =
      Stream.concat(
              PRIVILEGED.stream(),
              Stream.of(
                  "unshare_mount",
                  "clone_newuser",
                  "open_tree",
                  "move_mount",
                  "fsopen",
                  "fsmount",
                  "fspick",
                  "add_key",
                  "keyctl",
                  "request_key",
                  "userfaultfd",
                  "perf_event_open",
                  "io_uring_setup",
                  "ptrace_seize",
                  "process_vm_readv",
                  "kexec_file_load",
                  "settimeofday",
                  "adjtimex",
                  "name_to_handle_at",
                  "open_by_handle_at",
                  "personality",
                  "uselib",
                  "ustat",
                  "get_mempolicy",
                  "kcmp",
                  "socket_vsock",
                  "socket_alg_high_bits"))
          .toList();

  private Path dataDir = Path.of("/nonexistent");
  private SyscallGuard guard = SyscallGuard.unavailable("not installed yet");
  private Path attacks = Path.of("/nonexistent");

  @BeforeAll
  void installAndCompile(@TempDir Path data, @TempDir Path programs) throws Exception {
    dataDir = data;
    guard = SyscallGuard.install(dataDir);
    assertThat(guard.available()).as(guard.reason()).isTrue();
    attacks = AttackProgram.compile(programs);
  }

  private String binary() {
    Path binary = guard.binary();
    assertThat(binary).isNotNull();
    return String.valueOf(binary);
  }

  private Ran guarded(List<String> options, String... program)
      throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.add(binary());
    command.addAll(options);
    command.add("--");
    command.addAll(List.of(program));
    return Ran.run(command);
  }

  // --- install and probe -------------------------------------------------------------------------

  @Test
  void install_extractsAnExecutableHelper_andProbesThePolicy() throws IOException {
    Path binary = Path.of(binary());

    assertThat(binary).isEqualTo(dataDir.resolve("bin/box-guard"));
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(binary)))
        .isEqualTo("rwxr-xr-x");
    assertThat(guard.policy())
        .isEqualTo(SyscallGuard.POLICY)
        .isEqualTo("docker-default-equivalent");
  }

  @Test
  void install_isCachedPerDataDir_andWritesAChangedHelperAgain() throws Exception {
    assertThat(SyscallGuard.install(dataDir)).isSameAs(guard);
    byte[] original = Files.readAllBytes(Path.of(binary()));

    Files.write(Path.of(binary()), new byte[] {'#', '!', '/'});
    SyscallGuard again = SyscallGuard.install(dataDir);

    assertThat(again.available()).isTrue();
    assertThat(Files.readAllBytes(Path.of(binary()))).isEqualTo(original);
  }

  @Test
  void install_fromManyThreadsAtOnce_givesOneHelper(@TempDir Path otherDataDir) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Callable<SyscallGuard>> calls = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        calls.add(() -> SyscallGuard.install(otherDataDir));
      }
      List<SyscallGuard> guards = new ArrayList<>();
      for (Future<SyscallGuard> f : pool.invokeAll(calls)) {
        guards.add(f.get());
      }

      assertThat(guards).allSatisfy(g -> assertThat(g).isSameAs(guards.get(0)));
      assertThat(guards.get(0).available()).isTrue();
      try (var files = Files.list(otherDataDir.resolve("bin"))) {
        assertThat(files.map(p -> p.getFileName().toString())).containsExactly("box-guard");
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void sandboxCommands_startTheProgramThroughTheHelperAtItsFixedPath() {
    assertThat(SyscallGuard.sandboxCommand(List.of("/bin/sh", "-c", "x")))
        .containsExactly("/.box/box-guard", "--", "/bin/sh", "-c", "x");
    assertThat(SyscallGuard.sandboxInitCommand(List.of("sleep", "1")))
        .containsExactly("/.box/box-guard", "--init", "--", "sleep", "1");
  }

  // --- the filter --------------------------------------------------------------------------------

  @Test
  void deniedCalls_failWithEperm_forAnUnprivilegedProcess() throws Exception {
    Ran ran = guarded(NOBODY, attacks.toString());

    Map<String, String> results = AttackProgram.results(ran.stdout());
    assertThat(ran.exit()).as(ran.stderr()).isZero();
    for (String call : REFUSED) {
      assertThat(results.get(call)).as(call).isEqualTo(AttackProgram.EPERM);
    }
  }

  @Test
  void privilegedCalls_areRefusedByTheFilter_evenToRoot() throws Exception {
    List<String> program = new ArrayList<>(List.of(attacks.toString()));
    program.addAll(PRIVILEGED);

    Ran ran = guarded(List.of(), program.toArray(String[]::new));

    Map<String, String> results = AttackProgram.results(ran.stdout());
    for (String call : PRIVILEGED) {
      assertThat(results.get(call)).as(call).isEqualTo(AttackProgram.EPERM);
    }
  }

  @Test
  void clone3_answersEnosys_soThatTheCLibraryFallsBackToClone() throws Exception {
    Ran ran = guarded(NOBODY, attacks.toString(), "clone3", "openat2", "unreviewed");

    assertThat(AttackProgram.results(ran.stdout()))
        .containsEntry("clone3", AttackProgram.ENOSYS)
        .containsEntry("openat2", AttackProgram.ENOSYS)
        .containsEntry("unreviewed", AttackProgram.ENOSYS);
  }

  @Test
  void plainModes_areStillGiven_byChmodCreatAndOpenat() throws Exception {
    List<String> program = new ArrayList<>(List.of(attacks.toString()));
    program.addAll(AttackProgram.PLAIN_MODES);

    Ran ran = guarded(NOBODY, program.toArray(String[]::new));

    assertThat(AttackProgram.results(ran.stdout()))
        .as(ran.stderr())
        .containsOnlyKeys(AttackProgram.PLAIN_MODES)
        .allSatisfy((call, result) -> assertThat(result).as(call).isEqualTo("allowed"));
  }

  @Test
  void foreignAbiCalls_killTheProcess() throws Exception {
    Ran ran = guarded(NOBODY, attacks.toString(), "int80", "x32");

    Map<String, String> results = AttackProgram.results(ran.stdout());
    if (AttackProgram.onX86_64()) {
      assertThat(results)
          .containsEntry("int80", AttackProgram.KILLED_BY_SIGSYS)
          .containsEntry("x32", AttackProgram.KILLED_BY_SIGSYS);
    } else {
      assertThat(results).containsKeys("int80", "x32");
    }
  }

  /** Without the helper the same program sees the calls go through: the checks above can fail. */
  @Test
  void withoutTheFilter_theAttackProgramSeesTheCallsAllowed() throws Exception {
    Ran ran =
        Ran.run(
            List.of(
                "setpriv",
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                "--inh-caps=-all",
                "--bounding-set=-all",
                attacks.toString(),
                "add_key",
                "keyctl",
                "personality",
                "kcmp",
                "ptrace_seize",
                "process_vm_readv",
                "clone3",
                "chmod_setuid",
                "openat_setgid",
                "openat2",
                "int80"));

    Map<String, String> results = AttackProgram.results(ran.stdout());
    assertThat(results)
        .as(ran.stderr())
        .containsEntry("add_key", "allowed")
        .containsEntry("keyctl", "allowed")
        .containsEntry("personality", "allowed")
        .containsEntry("kcmp", "allowed")
        .containsEntry("ptrace_seize", "allowed")
        .containsEntry("process_vm_readv", "allowed")
        .containsEntry("clone3", "allowed")
        .containsEntry("chmod_setuid", "allowed")
        .containsEntry("openat_setgid", "allowed")
        .containsEntry("openat2", "allowed");
    if (AttackProgram.onX86_64()) {
      assertThat(results).containsEntry("int80", "allowed");
    }
  }

  @Test
  void unshareCommand_cannotCreateAUserOrNetworkNamespace() throws Exception {
    Ran user = guarded(NOBODY, "unshare", "-U", "true");
    Ran net = guarded(NOBODY, "unshare", "-n", "true");
    Ran rootUser = guarded(List.of(), "unshare", "-U", "true");

    assertThat(user.exit()).isNotZero();
    assertThat(user.stderr()).contains("Operation not permitted");
    assertThat(net.exit()).isNotZero();
    assertThat(rootUser.exit()).isNotZero();
  }

  // --- privileges --------------------------------------------------------------------------------

  @Test
  void uidAndGid_dropEveryCapability_andSetNoNewPrivileges() throws Exception {
    Ran ran = guarded(NOBODY, "cat", "/proc/self/status");

    assertThat(ran.exit()).as(ran.stderr()).isZero();
    assertThat(ran.stdout())
        .containsPattern("(?m)^Uid:\\s+65534\\s+65534\\s+65534\\s+65534$")
        .containsPattern("(?m)^Gid:\\s+65534\\s+65534\\s+65534\\s+65534$")
        .containsPattern("(?m)^Groups:\\s+65534\\s*$")
        .containsPattern("(?m)^CapInh:\\s+0+$")
        .containsPattern("(?m)^CapPrm:\\s+0+$")
        .containsPattern("(?m)^CapEff:\\s+0+$")
        .containsPattern("(?m)^CapBnd:\\s+0+$")
        .containsPattern("(?m)^CapAmb:\\s+0+$")
        .containsPattern("(?m)^NoNewPrivs:\\s+1$")
        .containsPattern("(?m)^Seccomp:\\s+2$");
  }

  @Test
  void aProcessThatIsNotRoot_mustAlreadyBeTheUidGiven() throws Exception {
    List<String> asNobody =
        List.of("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", binary());
    List<String> wrong = new ArrayList<>(asNobody);
    wrong.addAll(List.of("--uid", "1000", "--gid", "1000", "--", "true"));
    List<String> same = new ArrayList<>(asNobody);
    same.addAll(List.of("--uid", "65534", "--gid", "65534", "--", "true"));

    Ran refused = Ran.run(wrong);
    Ran accepted = Ran.run(same);

    assertThat(refused.exit()).isEqualTo(SyscallGuard.GUARD_FAILED);
    assertThat(refused.stderr()).startsWith("box-guard: ").contains("not uid 0");
    assertThat(accepted.exit()).as(accepted.stderr()).isZero();
  }

  // --- the command line --------------------------------------------------------------------------

  @Test
  void usageErrors_exit125_withOneLineOnStderr() throws Exception {
    for (List<String> args :
        List.of(
            List.of("--frobnicate", "--", "true"),
            List.of("true"),
            List.of("--uid", "65534", "--"),
            List.of("--"),
            List.of("--uid", "65534", "--", "true"),
            List.of("--uid", "x", "--gid", "1", "--", "true"),
            List.of("--", "/nonexistent/program"))) {
      List<String> command = new ArrayList<>(List.of(binary()));
      command.addAll(args);

      Ran ran = Ran.run(command);

      assertThat(ran.exit()).as("%s", args).isEqualTo(SyscallGuard.GUARD_FAILED);
      assertThat(ran.stderr()).as("%s", args).startsWith("box-guard: ").hasLineCount(1);
      assertThat(ran.stdout()).as("%s", args).isEmpty();
    }
  }

  @Test
  void success_writesNothing_andPassesTheExitStatusThrough() throws Exception {
    Ran ran = guarded(NOBODY, "sh", "-c", "exit 7");

    assertThat(ran.exit()).isEqualTo(7);
    assertThat(ran.stdout()).isEmpty();
    assertThat(ran.stderr()).isEmpty();
  }

  @Test
  void ordinaryWorkloads_stillRun() throws Exception {
    Ran sh = guarded(NOBODY, "sh", "-c", "echo ok");
    Ran python = guarded(NOBODY, "python3", "-c", "import subprocess; print(2 + 2)");
    Ran perl = guarded(NOBODY, "perl", "-e", "print 6 * 7, qq(\\n)");
    Ran threads =
        guarded(
            NOBODY,
            "python3",
            "-c",
            "import threading, subprocess;"
                + "t = threading.Thread(target=lambda: None); t.start(); t.join();"
                + "print(subprocess.run(['echo', 'child'], capture_output=True).stdout.decode())");

    assertThat(sh.stdout()).isEqualTo("ok\n");
    assertThat(python.stdout()).as(python.stderr()).isEqualTo("4\n");
    assertThat(perl.stdout()).as(perl.stderr()).isEqualTo("42\n");
    assertThat(threads.stdout()).as(threads.stderr()).isEqualTo("child\n\n");
  }

  @Test
  void init_runsTheProgramFiltered_reapsOrphans_andEndsWithItsStatus() throws Exception {
    // In a PID namespace of its own the helper is PID 1, as in a container.
    String script =
        "grep -q '^Seccomp:.2' /proc/1/status || exit 90;"
            + " sh -c 'true & exit 0';"
            + " for i in $(seq 100); do"
            + "   zombies=$(cat /proc/[0-9]*/stat 2>/dev/null | grep -c '^[0-9]* ([^)]*) Z');"
            + "   [ \"$zombies\" = 0 ] && exit 3; sleep 0.05;"
            + " done; exit 91";
    Ran ran =
        Ran.run(
            List.of(
                "unshare",
                "--pid",
                "--fork",
                "--mount-proc",
                binary(),
                "--init",
                "--",
                "sh",
                "-c",
                script));

    assertThat(ran.exit()).as(ran.stderr()).isEqualTo(3);
  }
}
