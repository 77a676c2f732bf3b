package dev.box.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.box.api.internal.FileTrees;
import dev.box.guard.AttackProgram;
import dev.box.guard.SyscallGuard;
import dev.box.testclient.Answer;
import dev.box.testclient.BoxHttp;
import dev.box.testclient.BoxSocket;
import dev.box.testclient.McpFixture;
import dev.box.testclient.OptionalPiece;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Attacks on the kernel from inside a sandbox, which the sandbox's seccomp filter must refuse, and
 * the workloads it must still let through; checked through a real Box server over HTTP.
 *
 * <p>A backend module adds a test that extends this class and names its backend, as for {@link
 * BackendConformanceSuite}. The suite starts one server per test class and one session whose {@code
 * /workspace} is a read-only host directory holding {@code syscall-attacks} ({@link AttackProgram}:
 * static C, compiled here with gcc, so that it runs in any image). The program attempts each call
 * once, in a child of its own, and prints the errno it got; it aims ptrace, process_vm_readv and
 * /proc/PID/mem at the sandbox's PID 1.
 *
 * <p>Every backend runs the attacks and the commands a minimal Debian image has (sh, coreutils,
 * perl). Where the sandbox sees the host's /usr ({@link #sandboxHasHostUsr()}), python3, node, gcc,
 * pip and the MCP reference server are run too; elsewhere those tests are skipped, and say why.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 180, unit = TimeUnit.SECONDS)
public abstract class SyscallFilterSuite extends BackendSuite {
  private static final String SESSION = "syscall-filter";

  private @Nullable SuiteServer server;
  private @Nullable Path programs;
  private @Nullable Map<String, String> attacks;

  /** Whether sandboxes see the host's /usr, so that the host's python3, node and gcc run there. */
  protected boolean sandboxHasHostUsr() {
    return false;
  }

  @BeforeAll
  final void startServerAndSession() throws Exception {
    OptionalPiece.assumeBackend(backendName());
    server = SuiteServer.start(backendName(), serverSettings(), Map.of());
    programs = Files.createTempDirectory("box-syscall-attacks-");
    AttackProgram.compile(programs);
    Wheel.write(programs);
    Answer created = box().post("/v1/sessions/" + SESSION, "{" + spec() + "}");
    assertThat(created.status()).as("%s", created).isEqualTo(201);
  }

  @AfterAll
  final void stopServer() throws IOException {
    if (server != null) {
      box().delete("/v1/sessions/" + SESSION);
      server.close();
    }
    if (programs != null) {
      FileTrees.deleteTreeQuietly(programs());
    }
  }

  // --- what health says ------------------------------------------------------------------------

  @Test
  void health_reportsTheSyscallFilter() {
    assertThat(health().path("enforced").path("seccomp").asText())
        .as("health: %s", health())
        .isEqualTo(SyscallGuard.POLICY);
  }

  // --- attacks ---------------------------------------------------------------------------------

  @ParameterizedTest
  @ValueSource(
      strings = {
        "unshare_user",
        "unshare_net",
        "unshare_mount",
        "clone_newuser",
        "mount_tmpfs",
        "setns",
        "add_key",
        "keyctl",
        "request_key",
        "bpf",
        "userfaultfd",
        "perf_event_open",
        "io_uring_setup",
        "ptrace_attach",
        "ptrace_seize",
        "process_vm_readv",
        "kexec_load",
        "init_module",
        "finit_module",
        "personality",
        "name_to_handle_at",
        "socket_alg_high_bits"
      })
  void attack_isRefusedWithEperm(String attack) {
    assertThat(attacks().get(attack))
        .as("%s in %s", attack, attacks())
        .isEqualTo(AttackProgram.EPERM);
  }

  @Test
  void clone3_answersEnosys_soThatTheCLibraryFallsBackToClone() {
    assertThat(attacks().get("clone3")).isEqualTo(AttackProgram.ENOSYS);
  }

  /**
   * A set-id mode given through any call is refused (through an idmapped mount a file would land on
   * the host as its owner's, set-id); openat2, whose mode the filter cannot read, answers ENOSYS.
   */
  @Test
  void setIdModes_areRefused_plainModesAreNot() {
    for (String call : AttackProgram.SET_ID) {
      assertThat(attacks().get(call)).as(call).isEqualTo(AttackProgram.EPERM);
    }
    for (String call : AttackProgram.PLAIN_MODES) {
      assertThat(attacks().get(call)).as(call).isEqualTo("allowed");
    }
    assertThat(attacks().get("openat2")).isEqualTo(AttackProgram.ENOSYS);
  }

  @Test
  void a32BitSyscall_throughInt0x80_killsTheProcess() {
    assumeThat(AttackProgram.onX86_64()).as("int 0x80 is an x86-64 attack").isTrue();

    // A kernel built without 32-bit support (a micro-VM's guest kernel) has no int 0x80 entry at
    // all: the instruction faults (SIGSEGV) before any filter could see a syscall. Such a kernel
    // has no abi.vsyscall32 sysctl.
    boolean no32BitEntry =
        exec("test -e /proc/sys/abi/vsyscall32 && echo ia32 || echo none")
            .stdout()
            .strip()
            .equals("none");
    List<String> killed =
        no32BitEntry
            ? List.of(AttackProgram.KILLED_BY_SIGSYS, "signal=11")
            : List.of(AttackProgram.KILLED_BY_SIGSYS);

    assertThat(attacks().get("int80")).as("32-bit entry: %s", !no32BitEntry).isIn(killed);
    assertThat(attacks().get("x32")).isEqualTo(AttackProgram.KILLED_BY_SIGSYS);
  }

  /**
   * An unfiltered PID 1 that a sandboxed process could rewrite would be a way out of the filter.
   */
  @Test
  void pid1_isFilteredToo_orCannotBeWrittenFromTheSandbox() {
    String pid1 =
        exec("grep -h '^Seccomp:' /proc/1/status 2>/dev/null || echo unreadable").stdout();

    boolean filtered = pid1.matches("Seccomp:\\s+2\\s*");
    assertThat(filtered || !"allowed".equals(attacks().get("proc_mem_write")))
        .as("PID 1: %s; opening /proc/1/mem for writing: %s", pid1, attacks().get("proc_mem_write"))
        .isTrue();
  }

  @Test
  void shellCommands_cannotCreateNamespacesOrMount() {
    Answer a =
        exec(
            "unshare -U true 2>/dev/null; echo U=$?; unshare -n true 2>/dev/null; echo N=$?;"
                + " mkdir -p /tmp/m; if command -v mount >/dev/null; then"
                + " mount -t tmpfs box /tmp/m 2>/dev/null; echo M=$?; else echo M=no-mount; fi");

    assertThat(a.stdout()).contains("U=1\n", "N=1\n").doesNotContain("M=0");
  }

  // --- every process runs under the filter -----------------------------------------------------

  @Test
  void anExec_runsUnderTheFilter_withoutCapabilities() {
    Answer a = exec("grep -E '^(CapBnd|CapEff|CapPrm|NoNewPrivs|Seccomp):' /proc/self/status");

    assertThat(a.stdout())
        .containsPattern("(?m)^Seccomp:\\s+2$")
        .containsPattern("(?m)^NoNewPrivs:\\s+1$")
        .containsPattern("(?m)^CapBnd:\\s+0+$")
        .containsPattern("(?m)^CapEff:\\s+0+$")
        .containsPattern("(?m)^CapPrm:\\s+0+$");
  }

  @Test
  void aManagedProcess_runsUnderTheFilter_withoutCapabilities() {
    String script =
        "read go; grep -E '^(CapBnd|Seccomp):' /proc/$$/status | tr -s '\\t' ' '; sleep 60";
    Answer started =
        box()
            .post(
                "/v1/sessions/" + SESSION + "/managed-process",
                "{\"process_id\":\"status\",\"command\":\"sh\",\"args\":[\"-c\",%s]}"
                    .formatted(BoxHttp.quote(script)));
    assertThat(started.status()).as("%s", started).isEqualTo(201);
    try (BoxSocket relay =
        ServerFleet.relay(box().port(), "/v1/sessions/" + SESSION + "/managed-process/status/ws")) {
      relay.send("go");

      assertThat(relay.nextText()).isEqualTo("CapBnd: 0000000000000000");
      assertThat(relay.nextText()).isEqualTo("Seccomp: 2");
    } finally {
      box().delete("/v1/sessions/" + SESSION + "/managed-process/status");
    }
  }

  // --- workloads -------------------------------------------------------------------------------

  @Test
  void shellCoreutilsAndPerl_stillWork() {
    Answer a =
        exec(
            "printf 'b\\na\\n' | sort | tr '\\n' ' '; echo; (sleep 0.1 & wait); echo bg=$?;"
                + " echo x | sha256sum | cut -c1-8; perl -e 'print 6 * 7, qq(\\n)'");

    assertThat(a.stdout()).as("%s", a).isEqualTo("a b \nbg=0\n73cb3858\n42\n");
  }

  static Stream<Arguments> hostWorkloads() {
    return Stream.of(
        Arguments.of(
            "python3 runs threads and subprocesses",
            "python3 -c 'import threading, subprocess;"
                + " t = threading.Thread(target=print, args=(\"thread\",)); t.start(); t.join();"
                + " print(subprocess.run([\"echo\", \"child\"], capture_output=True, text=True)"
                + ".stdout.strip())'",
            "thread\nchild\n"),
        Arguments.of(
            "node runs", "node -e 'require(\"child_process\"); console.log(6 * 7)'", "42\n"),
        Arguments.of(
            "gcc compiles and runs a program",
            "printf '#include <stdio.h>\\nint main(void) { puts(\"hello\"); return 0; }\\n'"
                + " > /tmp/hello.c && gcc -o /tmp/hello /tmp/hello.c && /tmp/hello",
            "hello\n"));
  }

  /** The host's interpreters and compiler, where the sandbox sees the host's /usr. */
  @ParameterizedTest(name = "{0}")
  @MethodSource("hostWorkloads")
  void hostWorkload_stillWorks(String name, String command, String stdout) {
    requireHostUsr();

    Answer a = exec(command);

    assertThat(a.stdout()).as("%s", a).isEqualTo(stdout);
  }

  @Test
  void pip_installsALocalWheel() {
    requireHostUsr();

    Answer a =
        exec(
            "python3 -m venv /tmp/venv && /tmp/venv/bin/pip install -q --no-index --no-cache-dir"
                + " --disable-pip-version-check /workspace/"
                + Wheel.FILE
                + " && /tmp/venv/bin/python -c 'import boxprobe; print(boxprobe.VALUE)'",
            "\"timeout_sec\":120");

    assertThat(a.stdout()).as("%s", a).isEqualTo(Wheel.VALUE + "\n");
  }

  @Test
  void theMcpReferenceServer_answersInitialize() throws Exception {
    requireHostUsr();
    Path entry = McpFixture.entryPoint();
    String session = "syscall-filter-mcp";
    String cache = McpFixture.CACHE.toString();
    Answer created =
        box()
            .post(
                "/v1/sessions/" + session,
                "{\"extra_mounts\":[{\"host_path\":%s,\"mount_path\":%s,\"mode\":\"ro\"}]}"
                    .formatted(BoxHttp.quote(cache), BoxHttp.quote(cache)));
    assertThat(created.status()).as("%s", created).isEqualTo(201);
    try {
      Answer started =
          box()
              .post(
                  "/v1/sessions/" + session + "/managed-process",
                  "{\"process_id\":\"mcp\",\"command\":\"node\",\"args\":[%s,\"stdio\"]}"
                      .formatted(BoxHttp.quote(entry.toString())));
      assertThat(started.status()).as("%s", started).isEqualTo(201);
      try (BoxSocket relay =
          ServerFleet.relay(box().port(), "/v1/sessions/" + session + "/managed-process/mcp/ws")) {
        relay.send(
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
                + "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                + "\"clientInfo\":{\"name\":\"box-testkit\",\"version\":\"1\"}}}");

        String answer = relay.nextText();
        while (!answer.contains("\"id\":1")) {
          answer = relay.nextText();
        }
        JsonNode result = BoxHttp.JSON.readTree(answer).path("result");
        assertThat(result.path("serverInfo").path("name").asText()).contains("everything");
      }
    } finally {
      box().delete("/v1/sessions/" + session);
    }
  }

  // --- helpers ---------------------------------------------------------------------------------

  /**
   * The session's spec: the attack program's directory, read-only, at /workspace (also the working
   * directory of every command, which write under /tmp).
   */
  private String spec() {
    return "\"host_path\":" + BoxHttp.quote(programs().toString()) + ",\"host_path_mode\":\"ro\"";
  }

  private Answer exec(String cmd) {
    return exec(cmd, "");
  }

  private Answer exec(String cmd, String more) {
    Answer a = box().exec(SESSION, cmd, spec() + (more.isEmpty() ? "" : "," + more));
    assertThat(a.status()).as("%s", a).isEqualTo(200);
    return a;
  }

  /** The attack program's results in the session, run once for the class. */
  private synchronized Map<String, String> attacks() {
    Map<String, String> results = attacks;
    if (results == null) {
      Answer a = exec("/workspace/syscall-attacks --target 1", "\"timeout_sec\":60");
      results = AttackProgram.results(a.stdout());
      assertThat(results).as("the attack program's output: %s", a).containsKey("unshare_user");
      attacks = results;
    }
    return results;
  }

  private void requireHostUsr() {
    assumeThat(sandboxHasHostUsr())
        .as("the %s sandbox runs an image with sh, coreutils and perl only", backendName())
        .isTrue();
  }

  private BoxHttp box() {
    return started(server).http;
  }

  private JsonNode health() {
    return started(server).health;
  }

  private Path programs() {
    Path p = programs;
    if (p == null) {
      throw new IllegalStateException("the attack program was not compiled");
    }
    return p;
  }
}
