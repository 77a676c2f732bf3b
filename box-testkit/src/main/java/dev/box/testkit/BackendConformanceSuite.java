package dev.box.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.box.api.BoxCapabilities;
import dev.box.api.internal.FileTrees;
import dev.box.server.BoxServer;
import dev.box.testclient.Answer;
import dev.box.testclient.BoxHttp;
import dev.box.testclient.BoxSocket;
import dev.box.testclient.HostProcesses;
import dev.box.testclient.OptionalPiece;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestReporter;
import org.junit.jupiter.api.Timeout;

/**
 * What every sandbox backend must do, checked through a real Box server over HTTP.
 *
 * <p>The subclasses live in box-testkit's own tests, one per backend ({@code BwrapConformanceTest},
 * and {@code DockerConformanceTest} and {@code PodmanConformanceTest} through {@code
 * ContainerConformance}), not in the backend modules: this suite runs a whole {@link BoxServer},
 * which depends on every backend module, so a backend module whose tests extended it would depend
 * on itself. A subclass names its backend and says how to see and kill the backend's objects from
 * outside Box, in this shape:
 *
 * <pre>{@code
 * class DockerConformanceTest extends BackendConformanceSuite {
 *   protected String backendName() { return "docker"; }
 *   protected Set<String> leftovers() { ... containers labelled langbot.box=true ... }
 *   protected void killSandboxFromOutside(String name) { ... docker kill name ... }
 * }
 * }</pre>
 *
 * <p>The suite starts one server per test class (port 0, a fresh temporary data directory, the
 * backend and {@link #serverSettings()}); a few tests start a second server of their own (idle
 * reaping, a crash). Every test uses its own session ids and deletes what it creates. Commands use
 * only POSIX sh, coreutils, grep, sed and procps, so that a minimal Debian image is enough; no test
 * assumes a uid, a home directory or a particular layout of the root filesystem.
 *
 * <p>The suite reads {@code GET /v1/health} once. A limit the backend enforces ({@code enforced}
 * not {@code none}) or a capability it declares is tested to work; one it does not is checked to be
 * reported as missing, and the test says so through the {@link TestReporter}. Nothing is skipped.
 *
 * <p>Tests start real sandboxes and real processes: run the subclass on a machine where the backend
 * works, not in parallel with another test class of the same backend.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class BackendConformanceSuite extends BackendSuite {
  /** Bytes kept per output stream of an exec by the suite's main server. */
  private static final int MAX_OUTPUT_BYTES = 4096;

  private static final Set<String> KNOWN_CAPABILITIES =
      Set.of(
          BoxCapabilities.IMAGES,
          BoxCapabilities.HOST_PATHS,
          BoxCapabilities.READ_ONLY_ROOTFS,
          BoxCapabilities.PROCESS_MEMORY_LIMIT,
          BoxCapabilities.TERMINAL,
          BoxCapabilities.PORTS,
          BoxCapabilities.PAUSE);

  private @Nullable SuiteServer server;
  private final List<String> sessions = new ArrayList<>();
  private final AtomicInteger counter = new AtomicInteger();
  private @Nullable Path hostDir;

  /**
   * Identifiers of every host-side object the backend has created for the suite's servers that
   * exists right now: sandbox processes, cgroups, containers, networks, ... Each identifier of an
   * object that belongs to one sandbox must contain that sandbox's name ({@code backend_session_id}
   * of the session), so that the suite can tell which session left it. The set may be scoped to
   * {@link #dataDirs()} when the backend can tell which server an object belongs to; otherwise it
   * should cover the whole host (then do not run two suites at once).
   */
  protected abstract Set<String> leftovers();

  /**
   * Kills the sandbox named {@code backendSessionId} behind Box's back, as a crash or an operator
   * would (bwrap: SIGKILL to its bwrap process; docker: {@code docker kill}), and returns once it
   * is dead.
   */
  protected abstract void killSandboxFromOutside(String backendSessionId);

  /** The data directories of every server this suite has started so far. */
  protected final List<Path> dataDirs() {
    SuiteServer s = server;
    return s == null ? List.of() : s.fleet.dataDirs();
  }

  @BeforeAll
  final void startServer() throws IOException {
    OptionalPiece.assumeBackend(backendName());
    server =
        SuiteServer.start(
            backendName(), serverSettings(), Map.of("max_output_bytes", "" + MAX_OUTPUT_BYTES));
    hostDir = Files.createTempDirectory("box-testkit-host-");
  }

  @AfterEach
  final void deleteSessions() {
    for (String id : sessions) {
      box().delete("/v1/sessions/" + id);
    }
    sessions.clear();
  }

  @AfterAll
  final void stopServers() throws IOException {
    if (server != null) {
      server.close();
    }
    if (hostDir != null) {
      FileTrees.deleteTreeQuietly(hostDir);
    }
  }

  // --- health and declarations -----------------------------------------------------------------

  @Test
  void health_namesTheBackend_andDeclaresEveryLimitAndOnlyKnownCapabilities() {
    assertThat(health().path("name").asText()).isEqualTo(backendName());
    assertThat(health().path("available").asBoolean())
        .as("backend unavailable: %s", health().path("reason").asText())
        .isTrue();
    for (String limit : List.of("memory", "pids", "cpu")) {
      assertThat(health().path("enforced").path(limit).asText())
          .as("how %s is enforced, or 'none'", limit)
          .isNotBlank();
    }
    assertThat(capabilities()).isSubsetOf(KNOWN_CAPABILITIES);
  }

  @Test
  void images_runWhenDeclared_andAreStillReportedAsGivenWhenNot(TestReporter reporter) {
    String id = session("image");
    String image;
    if (capabilities().contains(BoxCapabilities.IMAGES)) {
      String configured = serverSettings().get("image");
      assertThat(configured)
          .as("a backend that declares images needs the 'image' setting")
          .isNotNull();
      image = String.valueOf(configured);
    } else {
      image = "box-testkit/not-an-image:1";
      note(reporter, "images", "not declared: the image is only recorded");
    }
    String spec = "\"image\":" + BoxHttp.quote(image);
    Answer created = box().post("/v1/sessions/" + id, "{" + spec + "}");

    assertThat(created.status()).isEqualTo(201);
    assertThat(created.text("image")).isEqualTo(image);
    assertThat(box().exec(id, "echo ran", spec).stdout()).isEqualTo("ran\n");
  }

  @Test
  void readOnlyRootfs_isReadOnlyWithAWritableTmp_whenDeclared(TestReporter reporter) {
    if (!capabilities().contains(BoxCapabilities.READ_ONLY_ROOTFS)) {
      note(reporter, "read_only_rootfs", "not declared: not tested");
      assertThat(capabilities()).doesNotContain(BoxCapabilities.READ_ONLY_ROOTFS);
      return;
    }
    Answer a =
        box()
            .exec(
                session("rootfs"),
                "touch /usr/box-x 2>&1; touch /box-x 2>&1; touch /tmp/box-x && echo tmp-ok",
                "\"read_only_rootfs\":true");

    assertThat(a.stdout()).contains("Read-only file system").endsWith("tmp-ok\n");
    assertThat(a.stdout().split("Read-only file system", -1)).hasSize(3);
  }

  /**
   * A port is reached through the sandbox, with its network off: where nothing listens, the pipe in
   * the sandbox says so (502, naming the port); a backend without ports refuses with a 400 that
   * names it. (A minimal image has no server to answer: the server's own tests relay real traffic.)
   */
  @Test
  void ports_areReachedThroughTheSandbox_whenDeclared(TestReporter reporter) {
    String id = session("ports");
    box().post("/v1/sessions/" + id, "{\"network\":\"off\"}");
    Answer answer = box().get("/v1/sessions/" + id + "/ports/9/");
    if (!capabilities().contains(BoxCapabilities.PORTS)) {
      note(reporter, "ports", "not declared: refused");
      assertThat(answer.status()).isEqualTo(400);
      assertThat(answer.errorMessage()).contains(String.valueOf(health().path("name").asText()));
      return;
    }
    assertThat(answer.status()).as(answer.body().toString()).isEqualTo(502);
    assertThat(answer.errorMessage()).contains("port 9");
  }

  /**
   * A background counter, writing to a host directory mounted as the workspace, stands still while
   * its session is paused (read from the host twice, a second apart) and counts again once an exec
   * resumes the session; a backend without pause refuses it with a 400 that names it.
   */
  @Test
  void pause_freezesEveryProcessUntilTheNextUse_whenDeclared(TestReporter reporter)
      throws Exception {
    String id = session("pause");
    if (!capabilities().contains(BoxCapabilities.PAUSE)) {
      note(reporter, "pause", "not declared: refused");
      box().post("/v1/sessions/" + id, "{}");
      Answer refused = box().post("/v1/sessions/" + id + "/pause", "");
      assertThat(refused.status()).isEqualTo(400);
      assertThat(refused.errorMessage()).contains(String.valueOf(health().path("name").asText()));
      return;
    }
    Path dir = writableHostDir("pause");
    String spec = hostPath(dir, "rw");
    Path counter = dir.resolve("n");
    box()
        .exec(
            id,
            "i=0; while :; do i=$((i+1)); echo $i > /workspace/.n; mv /workspace/.n /workspace/n;"
                + " sleep 0.05; done > /dev/null 2>&1 &",
            spec);
    await().atMost(patience(20)).until(() -> Files.exists(counter));

    assertThat(box().post("/v1/sessions/" + id + "/pause", "").text("state")).isEqualTo("paused");
    String frozen = Files.readString(counter);
    Thread.sleep(1000);
    assertThat(Files.readString(counter)).as("the counter while paused").isEqualTo(frozen);

    assertThat(box().exec(id, "echo awake", spec).stdout()).isEqualTo("awake\n");
    assertThat(box().get("/v1/sessions/" + id).text("state")).isEqualTo("running");
    await().atMost(patience(20)).until(() -> !Files.readString(counter).equals(frozen));
  }

  // --- files -----------------------------------------------------------------------------------

  @Test
  void files_writeReadListAndArchive_runInsideTheSandbox() throws IOException {
    String id = session("files");
    String copy = session("files-copy");
    box().exec(id, "true", "");
    box().exec(copy, "true", "");
    byte[] data = new byte[256 * 40];
    for (int i = 0; i < data.length; i++) {
      data[i] = (byte) (i + i / 256);
    }
    String dir = "/workspace/box-testkit/files";

    BoxHttp.Bytes written = box().sendBytes("PUT", filesRoute(id, dir + "/d/data.bin"), data);
    BoxHttp.Bytes read = box().sendBytes("GET", filesRoute(id, dir + "/d/data.bin"), new byte[0]);
    JsonNode listing =
        box().get(filesRoute(id, dir + "/d").replace("/files?", "/files/list?")).body();
    BoxHttp.Bytes missing = box().sendBytes("GET", filesRoute(id, dir + "/nope"), new byte[0]);
    BoxHttp.Bytes tar =
        box()
            .sendBytes(
                "GET", "/v1/sessions/" + id + "/archive?path=" + BoxHttp.query(dir), new byte[0]);
    BoxHttp.Bytes extracted =
        box()
            .sendBytes(
                "PUT", "/v1/sessions/" + copy + "/archive?path=" + BoxHttp.query(dir), tar.body());

    assertThat(written.status()).isEqualTo(200);
    assertThat(written.json().path("size").asLong()).isEqualTo(data.length);
    assertThat(read.status()).isEqualTo(200);
    assertThat(read.body()).isEqualTo(data);
    JsonNode entry = listing.path("entries").path(0);
    assertThat(listing.path("entries").size()).isEqualTo(1);
    assertThat(entry.path("name").asText()).isEqualTo("data.bin");
    assertThat(entry.path("type").asText()).isEqualTo("file");
    assertThat(entry.path("size").asLong()).isEqualTo(data.length);
    assertThat(missing.status()).isEqualTo(404);
    assertThat(missing.errorCode()).isEqualTo("file_not_found");
    assertThat(tar.status()).isEqualTo(200);
    assertThat(extracted.status()).isEqualTo(200);
    String sum = "sha256sum " + dir + "/d/data.bin";
    assertThat(box().exec(copy, sum, "").stdout())
        .isEqualTo(box().exec(id, sum, "").stdout())
        .isNotEmpty();
  }

  private static String filesRoute(String session, String path) {
    return "/v1/sessions/" + session + "/files?path=" + BoxHttp.query(path);
  }

  // --- exec ------------------------------------------------------------------------------------

  @Test
  void exec_returnsStdoutStderrAndExitCode_andANonZeroExitIsANormalResult() {
    Answer a = box().exec(session("basics"), "echo '  out  '; echo err >&2; exit 3", "");

    assertThat(a.status()).isEqualTo(200);
    assertThat(a.text("status")).isEqualTo("completed");
    assertThat(a.body().path("exit_code").asInt()).isEqualTo(3);
    assertThat(a.ok()).isFalse();
    assertThat(a.stdout()).isEqualTo("  out  \n");
    assertThat(a.stderr()).isEqualTo("err\n");
    assertThat(a.text("backend_name")).isEqualTo(backendName());
  }

  @Test
  void exec_createsAMissingWorkdir() {
    Answer a = box().exec(session("workdir"), "pwd", "\"workdir\":\"/workspace/box-testkit/a/b\"");

    assertThat(a.stdout()).isEqualTo("/workspace/box-testkit/a/b\n");
  }

  @Test
  void exec_appliesEnv() {
    Answer a =
        box()
            .exec(
                session("env"),
                "echo \"$GREETING\" \"$SECOND\"",
                "\"env\":{\"GREETING\":\"hello there\",\"SECOND\":\"a'b\"}");

    assertThat(a.stdout()).isEqualTo("hello there a'b\n");
  }

  @Test
  void exec_runsACommandWithQuotesNewlinesAndSubstitutionsAsWritten() {
    String cmd =
        "printf '%s\\n' \"a  b\" 'c\"d' \\\n  'e$f'\necho $(echo sub) \"$((1 + 2))\" `echo bq`";

    Answer a = box().exec(session("quoting"), cmd, "");

    assertThat(a.stdout()).isEqualTo("a  b\nc\"d\ne$f\nsub 3 bq\n");
    assertThat(a.stderr()).isEmpty();
  }

  @Test
  void envAndCommand_neverAppearOnAHostCommandLineWhileTheCommandRuns() throws Exception {
    String id = session("secret");
    box().post("/v1/sessions/" + id, "{}");
    String secret = "box-secret-" + UUID.randomUUID();
    String cmd =
        ": "
            + secret
            + "; touch /tmp/started; while [ ! -f /tmp/done ]; do sleep 0.05; done; echo \"$SECRET\"";
    CompletableFuture<Answer> running =
        CompletableFuture.supplyAsync(
            () ->
                box()
                    .exec(
                        id,
                        cmd,
                        "\"env\":{\"SECRET\":" + BoxHttp.quote(secret) + "},\"timeout_sec\":30"));
    await().atMost(patience(30)).until(() -> box().exec(id, "test -f /tmp/started", "").ok());
    String seen = HostProcesses.commandLinesContaining(secret);
    box().exec(id, "touch /tmp/done", "");

    Answer a = running.get(patience(60).toSeconds(), TimeUnit.SECONDS);
    assertThat(a.stdout())
        .as("the command ran with the secret in its env")
        .isEqualTo(secret + "\n");
    assertThat(seen).as("host processes whose command line holds the secret").isEmpty();
  }

  @Test
  void timeout_killsTheWholeTreeItStarted_andTheSessionSurvives() {
    String id = session("timeout");
    String marker = marker();
    String leak = "/tmp/box-leak-" + marker;
    String cmd =
        "(setsid sh -c 'sleep 2; echo leaked > "
            + leak
            + "-setsid' box-"
            + marker
            + " &); nohup sh -c 'sleep 2; echo leaked > "
            + leak
            + "-nohup' box-"
            + marker
            + " >/dev/null 2>&1 & echo before; sleep "
            + marker;

    Answer a = box().exec(id, cmd, "\"timeout_sec\":1");

    assertThat(a.text("status")).isEqualTo("timed_out");
    assertThat(a.stdout()).isEqualTo("before\n");
    assertThat(a.body().path("duration_ms").asLong()).isLessThan(30_000);
    await()
        .during(Duration.ofSeconds(3))
        .atMost(patience(20))
        .pollInterval(Duration.ofMillis(500))
        .until(() -> !box().exec(id, "ls /tmp", "").stdout().contains("box-leak-" + marker));
    assertThat(processesWith(id, marker)).as("processes of the timed-out exec").isZero();
    assertThat(box().exec(id, "echo alive", "").stdout()).isEqualTo("alive\n");
  }

  @Test
  void backgroundProcess_doesNotHoldTheExec_andDiesWithTheSession() {
    Set<String> before = leftovers();
    String id = session("background");
    String marker = marker();
    // The session first, untimed: what is timed is the exec alone, not a sandbox's start (a VM's
    // boot when no pooled one waits).
    assertThat(box().post("/v1/sessions/" + id, "{}").status()).isEqualTo(201);

    long start = System.nanoTime();
    Answer a = box().exec(id, "sleep " + marker + " & echo started", "");
    long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

    assertThat(a.stdout()).isEqualTo("started\n");
    assertThat(millis)
        .as("exec returned while its background child runs")
        .isLessThan(patience(10).toMillis());
    assertThat(processesWith(id, marker)).as("the background process outlives the exec").isOne();
    String sandbox = box().get("/v1/sessions/" + id).text("backend_session_id");
    assertThat(leftoversOf(sandbox)).as("leftovers() sees the live sandbox").isNotEmpty();
    assertThat(box().delete("/v1/sessions/" + id).status()).isEqualTo(200);
    awaitNothingNewSince(before);
  }

  @Test
  void output_isBoundedWithAMarker_andCountsWhatWasDropped() {
    Answer a =
        box()
            .exec(
                session("flood"), "head -c 1000000 /dev/zero | tr '\\000' a", "\"timeout_sec\":60");

    assertThat(a.text("status")).isEqualTo("completed");
    assertThat(a.body().path("stdout_truncated_bytes").asLong())
        .isEqualTo(1_000_000L - MAX_OUTPUT_BYTES);
    assertThat(a.stdout()).startsWith("aaaa").endsWith("aaaa").contains("dropped");
    assertThat(a.stdout().length()).isLessThan(MAX_OUTPUT_BYTES + 200);
  }

  // --- limits ----------------------------------------------------------------------------------

  @Test
  void memoryLimit_killsACommandThatOutgrowsIt(TestReporter reporter) {
    if (!enforces("memory", reporter)) {
      return;
    }
    String grow = "x=$(head -c %d /dev/zero | tr '\\000' a); echo survived ${#x}";

    Answer small = box().exec(session("mem"), grow.formatted(10_000_000), "\"memory_mb\":64");
    Answer big =
        box()
            .exec(
                session("mem"), grow.formatted(200_000_000), "\"memory_mb\":64,\"timeout_sec\":60");

    assertThat(small.stdout()).isEqualTo("survived 10000000\n");
    assertThat(big.stdout()).doesNotContain("survived 200000000");
    assertThat(big.ok()).as("exit code %s", big.body().path("exit_code")).isFalse();
  }

  @Test
  void pidsLimit_refusesForksBeyondIt(TestReporter reporter) {
    if (!enforces("pids", reporter)) {
      return;
    }
    String fork = "i=0; while [ $i -lt %d ]; do sleep 30 & i=$((i + 1)); done; echo spawned";

    Answer within = box().exec(session("pids"), fork.formatted(10), "\"pids_limit\":32");
    Answer beyond =
        box().exec(session("pids"), fork.formatted(100), "\"pids_limit\":32,\"timeout_sec\":60");

    assertThat(within.stderr()).isEmpty();
    assertThat(within.stdout()).isEqualTo("spawned\n");
    assertThat(beyond.stderr()).containsIgnoringCase("fork");
  }

  @Test
  void cpuLimit_throttlesABusyLoop(TestReporter reporter) {
    if (!enforces("cpu", reporter)) {
      return;
    }
    // A busy loop for 2 s of the sandbox's time, then the CPU time it used in clock ticks, and
    // the tick rate; against the wall time the whole exec took here. A VM's guest counts its own
    // CPU time, blind to the host's quota that slows all of it, so it is the CPU time per second
    // of the host's clock that the quota bounds, on every backend.
    String busy =
        "sh -c 'while :; do :; done' & p=$!; sleep 2; set -- $(cut -d' ' -f14,15 /proc/$p/stat);"
            + " kill $p; echo $(($1 + $2)) $(getconf CLK_TCK)";
    String id = session("cpu");
    String cpus = "\"cpus\":0.5";
    // The session (a VM's boot, a container's start) before the clock starts.
    box().exec(id, "true", cpus);

    long started = System.nanoTime();
    Answer a = box().exec(id, busy, cpus);
    double wall = (System.nanoTime() - started) / 1e9;

    String[] fields = a.stdout().strip().split(" ");
    assertThat(fields).as(a.stdout() + a.stderr()).hasSize(2);
    double seconds = Double.parseDouble(fields[0]) / Double.parseDouble(fields[1]);
    assertThat(seconds).as("CPU seconds of a 2 s busy loop at 0.5 cpus").isGreaterThan(0.01);
    assertThat(seconds / wall)
        .as("CPU seconds %.2f in %.2f s of wall time at 0.5 cpus", seconds, wall)
        .isLessThanOrEqualTo(0.75);
  }

  // --- network ---------------------------------------------------------------------------------

  @Test
  void networkOff_leavesOnlyLoopbackAndNoRoute() {
    Answer a =
        box()
            .exec(
                session("net-off"),
                "cat /proc/net/dev; echo ROUTES; tail -n +2 /proc/net/route",
                "\"network\":\"off\"");

    String[] parts = a.stdout().split("ROUTES\n", -1);
    assertThat(interfaces(parts[0])).containsExactly("lo");
    assertThat(parts[1]).as("routes").isEmpty();
  }

  @Test
  void networkOn_hasAnInterfaceBesidesLoopback() {
    Answer a = box().exec(session("net-on"), "cat /proc/net/dev", "\"network\":\"on\"");

    assertThat(a.status()).isEqualTo(200);
    assertThat(interfaces(a.stdout())).anyMatch(name -> !name.equals("lo"));
  }

  // --- filesystem ------------------------------------------------------------------------------

  @Test
  void hostFiles_theDataDirAndRootsHome_areNotVisibleInside(TestReporter reporter)
      throws IOException {
    Path secret = Files.createTempFile("box-testkit-secret-", "");
    Path rootMarker = Path.of("/root", ".box-testkit-" + UUID.randomUUID());
    boolean rootMarked = false;
    try {
      try {
        Files.writeString(rootMarker, "host");
        rootMarked = true;
      } catch (IOException e) {
        note(reporter, "/root", "not writable by this test: checked without a marker");
      }
      List<String> paths =
          new ArrayList<>(List.of(secret.toString(), dataDirs().get(0).toString()));
      if (rootMarked) {
        paths.add(rootMarker.toString());
      }
      String cmd =
          "for p in "
              + String.join(" ", paths)
              + "; do if [ -e \"$p\" ]; then echo \"visible $p\"; fi; done; echo checked";

      Answer a = box().exec(session("secrets"), cmd, "");

      assertThat(a.stdout()).isEqualTo("checked\n");
    } finally {
      Files.deleteIfExists(secret);
      Files.deleteIfExists(rootMarker);
    }
  }

  @Test
  void filesWrittenToTmpInside_doNotAppearInTheHostsTmp() {
    String name = "box-testkit-inside-" + UUID.randomUUID();

    Answer a = box().exec(session("tmp"), "echo x > /tmp/" + name + " && cat /tmp/" + name, "");

    assertThat(a.stdout()).isEqualTo("x\n");
    assertThat(Path.of("/tmp", name)).doesNotExist();
  }

  @Test
  void hostPathReadWrite_writesFromInsideAppearOnTheHost_ownedByAnUnprivilegedUid()
      throws IOException {
    Path dir = writableHostDir("rw");
    if (!mountsHostPaths(session("host-rw"), hostPath(dir, "rw"))) {
      return;
    }

    Answer a = box().exec(session("host-rw"), "echo hi > /workspace/out", hostPath(dir, "rw"));

    assertThat(a.ok()).as(a.stderr()).isTrue();
    assertThat(dir.resolve("out")).hasContent("hi");
    assertThat((Integer) Files.getAttribute(dir.resolve("out"), "unix:uid"))
        .as("the host owner of what a sandbox writes")
        .isNotZero();
  }

  @Test
  void hostPathReadOnly_isReadableAndRefusesWrites() throws IOException {
    Path dir = writableHostDir("ro");
    Files.writeString(dir.resolve("in"), "x");
    if (!mountsHostPaths(session("host-ro"), hostPath(dir, "ro"))) {
      return;
    }

    Answer a =
        box()
            .exec(
                session("host-ro"),
                "cat /workspace/in; echo y > /workspace/in",
                hostPath(dir, "ro"));

    assertThat(a.stdout()).isEqualTo("x");
    assertThat(a.ok()).isFalse();
    assertThat(a.stderr()).isNotEmpty();
    assertThat(dir.resolve("in")).hasContent("x");
  }

  @Test
  void aHostDirEvenItsOwnerCannotEnter_isRefusedAtCreation_namingItsOwnerAndMode()
      throws IOException {
    // Mode 0000: neither the sandbox user nor the owner, which an idmapped mount would make the
    // sandbox user, can enter it.
    Path dir = Files.createDirectory(hostDir().resolve("private-" + counter.incrementAndGet()));
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("---------"));

    String id = session("host-0000");
    if (!mountsHostPaths(id, hostPath(dir, "ro"))) {
      return;
    }
    Answer a = box().exec(id, "ls /workspace", hostPath(dir, "ro"));

    assertThat(a.status()).as("%s", a).isEqualTo(400);
    assertThat(a.errorCode()).isEqualTo("validation_error");
    assertThat(a.errorMessage())
        .startsWith("host_path " + dir.toRealPath() + " (owner uid 0, group 0, mode 0000)")
        .contains("is not readable by the sandbox user");
    assertThat(box().get("/v1/sessions/" + id).status()).as("no session was made").isEqualTo(404);
  }

  @Test
  void hostPathModeNone_doesNotMountTheHostDir() throws IOException {
    Path dir = writableHostDir("none");
    Files.writeString(dir.resolve("marker"), "x");

    Answer a =
        box()
            .exec(
                session("host-none"),
                "if [ -e /workspace/marker ]; then echo visible; fi; echo checked",
                hostPath(dir, "none") + ",\"workdir\":\"/tmp\"");

    assertThat(a.stdout()).as("%s", a).isEqualTo("checked\n");
  }

  @Test
  void extraMounts_honourTheirMode() throws IOException {
    Path ro = writableHostDir("extra-ro");
    Path rw = writableHostDir("extra-rw");
    Files.writeString(ro.resolve("in"), "x");
    String mounts =
        "\"extra_mounts\":[{\"host_path\":%s,\"mount_path\":\"/mnt/box-ro\",\"mode\":\"ro\"},"
                .formatted(BoxHttp.quote(ro.toString()))
            + "{\"host_path\":%s,\"mount_path\":\"/mnt/box-rw\",\"mode\":\"rw\"}]"
                .formatted(BoxHttp.quote(rw.toString()));
    if (!mountsHostPaths(session("extra"), mounts)) {
      return;
    }

    Answer a =
        box()
            .exec(
                session("extra"),
                "cat /mnt/box-ro/in; echo w > /mnt/box-rw/out;"
                    + " (echo z > /mnt/box-ro/in) 2>/dev/null || echo ro-refused",
                mounts);

    assertThat(a.stdout()).isEqualTo("xro-refused\n");
    assertThat(rw.resolve("out")).hasContent("w");
    assertThat(ro.resolve("in")).hasContent("x");
  }

  @Test
  void blockedHostPaths_areValidationErrors_andCreateNothing() throws IOException {
    Path escape =
        Files.createSymbolicLink(hostDir().resolve("escape-" + counter.get()), Path.of("/etc"));
    Set<String> before = leftovers();
    String id = session("blocked");
    for (String path : List.of("/etc", "/proc", escape.toString())) {
      Answer a = box().post("/v1/sessions/" + id, "{\"host_path\":" + BoxHttp.quote(path) + "}");

      assertThat(a.status()).as(path).isEqualTo(400);
      assertThat(a.errorCode()).as(path).isEqualTo("validation_error");
      assertThat(a.errorMessage())
          .as(path)
          .contains(capabilities().contains(BoxCapabilities.HOST_PATHS) ? "blocked" : "host_path");
    }

    assertThat(box().get("/v1/sessions/" + id).status()).isEqualTo(404);
    assertThat(difference(leftovers(), before)).isEmpty();
  }

  // --- session lifecycle -----------------------------------------------------------------------

  @Test
  void sameIdWithAnotherSpec_isAConflict_andTheSameSpecReusesTheSandbox() {
    String id = session("conflict");
    Answer created = box().post("/v1/sessions/" + id, "{}");

    Answer conflict = box().post("/v1/sessions/" + id, "{\"memory_mb\":1024}");
    Answer reused = box().post("/v1/sessions/" + id, "{}");

    assertThat(created.status()).isEqualTo(201);
    assertThat(conflict.status()).isEqualTo(409);
    assertThat(conflict.errorCode()).isEqualTo("session_conflict");
    assertThat(reused.status()).isEqualTo(200);
    assertThat(reused.text("backend_session_id")).isEqualTo(created.text("backend_session_id"));
  }

  @Test
  void aSandboxKilledFromOutside_isRecreatedOnNextUse() {
    String id = session("killed");
    String marker = marker();
    Answer created = box().post("/v1/sessions/" + id, "{}");
    assertThat(box().exec(id, "sleep " + marker + " & echo one", "").stdout()).isEqualTo("one\n");

    killSandboxFromOutside(created.text("backend_session_id"));

    Answer after = box().exec(id, "echo back", "");
    assertThat(after.status()).as("%s", after).isEqualTo(200);
    assertThat(after.stdout()).isEqualTo("back\n");
    assertThat(processesWith(id, marker)).as("processes of the killed sandbox").isZero();
  }

  @Test
  void deletingASession_leavesNothingBehind() {
    deleteLeavesNothingBehind("delete", "{}");
  }

  @Test
  void deletingANetworkOnSession_leavesNothingBehind_itsNetworkIncluded() {
    deleteLeavesNothingBehind("delete-net", "{\"network\":\"on\"}");
  }

  private void deleteLeavesNothingBehind(String name, String spec) {
    Set<String> before = leftovers();
    String id = session(name);
    Answer created = box().post("/v1/sessions/" + id, spec);
    box().exec(id, "echo data > /tmp/f", "");
    String sandbox = created.text("backend_session_id");
    assertThat(leftoversOf(sandbox)).as("leftovers() sees the live sandbox").isNotEmpty();

    Answer deleted = box().delete("/v1/sessions/" + id);

    assertThat(deleted.status()).isEqualTo(200);
    assertThat(box().get("/v1/sessions/" + id).status()).isEqualTo(404);
    awaitNothingNewSince(before);
  }

  @Test
  @Timeout(value = 90, unit = TimeUnit.SECONDS)
  void idleSessionsAreReaped_butPersistentOnesAreKept() throws IOException {
    BoxServer server = fleet().start(fleet().newDataDir(), Map.of("session_ttl_sec", "1"));
    try {
      BoxHttp http = ServerFleet.http(server.port());
      Answer kept = http.post("/v1/sessions/kept", "{\"persistent\":true}");
      Answer idle = http.post("/v1/sessions/idle", "{}");
      assertThat(kept.status()).isEqualTo(201);
      assertThat(idle.status()).isEqualTo(201);

      await()
          .atMost(patience(40))
          .pollInterval(Duration.ofMillis(500))
          .until(() -> http.get("/v1/sessions/idle").status() == 404);

      assertThat(http.get("/v1/sessions/kept").body().path("persistent").asBoolean()).isTrue();
      assertThat(http.exec("kept", "echo still", "\"persistent\":true").stdout())
          .isEqualTo("still\n");
      awaitGone(idle.text("backend_session_id"));
      // Where sessions outlive their server for the next one (a cluster), leave none to others.
      assertThat(http.delete("/v1/sessions/kept").status()).isEqualTo(200);
    } finally {
      fleet().stop(server);
    }
  }

  @Test
  void sandboxesLeftByACrashedServer_areRemovedByTheNextServerOnTheDataDir(TestReporter reporter)
      throws Exception {
    Path dataDir = fleet().newDataDir();
    ServerFleet.Child child = fleet().startChild(dataDir, hostDir().resolve("child-server.log"));
    BoxHttp http = ServerFleet.http(child.port());
    Answer created = http.post("/v1/sessions/crash", "{}");
    assertThat(created.status()).isEqualTo(201);
    assertThat(http.exec("crash", "sleep 300 & echo up", "").stdout()).isEqualTo("up\n");
    String sandbox = created.text("backend_session_id");
    assertThat(leftoversOf(sandbox)).as("leftovers() sees the live sandbox").isNotEmpty();

    child.process().destroyForcibly();
    assertThat(child.process().waitFor(30, TimeUnit.SECONDS)).as("the child server died").isTrue();
    note(reporter, "left after the crash", leftoversOf(sandbox).toString());

    BoxServer next = fleet().start(dataDir, Map.of());
    try {
      awaitGone(sandbox);
    } finally {
      fleet().stop(next);
    }
  }

  /**
   * Whether this backend's sandboxes outlive a crash of their server, so that the next server
   * adopts a persistent session's sandbox with everything running in it (containers); false when
   * they die with the server and a restored session gets a fresh sandbox (bubblewrap).
   */
  protected boolean adoptsAfterACrash() {
    return false;
  }

  /**
   * How many times longer than on a namespace backend this backend may take to show what a test
   * waits for: a bound on waiting, never a measure of speed. Micro-VMs under TCG boot and run
   * several times slower.
   */
  protected int patienceFactor() {
    return 1;
  }

  /** The longest a test waits for something that takes {@code seconds} on a namespace backend. */
  protected final Duration patience(int seconds) {
    return Duration.ofSeconds((long) seconds * patienceFactor());
  }

  @Test
  void aPersistentSession_survivesAKillOfItsServer_withItsFiles() throws Exception {
    Path dataDir = fleet().newDataDir();
    ServerFleet.Child child =
        fleet().startChild(dataDir, hostDir().resolve("persistent-server.log"));
    BoxHttp http = ServerFleet.http(child.port());
    Answer created = http.post("/v1/sessions/kept", "{\"persistent\": true}");
    assertThat(created.status()).as("%s", created).isEqualTo(201);
    String persistent = "\"persistent\": true";
    String before =
        "echo still-here > /workspace/note; echo same-sandbox > /tmp/mark;"
            + " nohup sleep 1000 >/dev/null 2>&1 &";
    assertThat(http.exec("kept", before, persistent).ok()).isTrue();
    String sandbox = created.text("backend_session_id");

    child.process().destroyForcibly();
    assertThat(child.process().waitFor(30, TimeUnit.SECONDS)).as("the child server died").isTrue();

    BoxServer next = fleet().start(dataDir, Map.of());
    try {
      BoxHttp again = ServerFleet.http(next.port());
      Answer listed = again.get("/v1/sessions/kept");
      assertThat(listed.status()).as("%s", listed).isEqualTo(200);
      assertThat(listed.text("created_at")).isEqualTo(created.text("created_at"));
      assertThat(again.exec("kept", "cat /workspace/note", persistent).stdout())
          .isEqualTo("still-here\n");
      String after =
          "cat /tmp/mark 2>/dev/null || echo fresh-sandbox; for p in /proc/[0-9]*; do"
              + " tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done | grep -c '^sleep 1000'";
      String seen = again.exec("kept", after, persistent).stdout();
      if (adoptsAfterACrash()) {
        assertThat(listed.text("backend_session_id")).isEqualTo(sandbox);
        assertThat(seen)
            .as("the same sandbox, its processes running")
            .isEqualTo("same-sandbox\n1\n");
      } else {
        assertThat(seen)
            .as("a fresh sandbox on the kept workspace")
            .isEqualTo("fresh-sandbox\n0\n");
        awaitGone(sandbox);
      }
      assertThat(again.delete("/v1/sessions/kept").status()).isEqualTo(200);
    } finally {
      fleet().stop(next);
    }
  }

  // --- managed processes -----------------------------------------------------------------------

  @Test
  void managedProcess_relaysLinesBothWays() {
    String id = session("relay");
    box().post("/v1/sessions/" + id, "{}");
    Answer started =
        box()
            .post(
                "/v1/sessions/" + id + "/managed-process",
                "{\"process_id\":\"echo\",\"command\":\"cat\"}");
    assertThat(started.status()).isEqualTo(201);
    assertThat(started.text("status")).isEqualTo("running");

    try (BoxSocket relay =
        ServerFleet.relay(box().port(), "/v1/sessions/" + id + "/managed-process/echo/ws")) {
      relay.send("hello relay");
      relay.send("{\"jsonrpc\":\"2.0\",\"id\":1}");

      assertThat(relay.nextText()).isEqualTo("hello relay");
      assertThat(relay.nextText()).isEqualTo("{\"jsonrpc\":\"2.0\",\"id\":1}");
    }
  }

  @Test
  void managedProcessStop_killsATreeThatIgnoresSigterm() {
    String id = session("stop");
    String marker = marker();
    box().post("/v1/sessions/" + id, "{}");
    String args = BoxHttp.quote("trap '' TERM; sleep " + marker + " & wait");
    box()
        .post(
            "/v1/sessions/" + id + "/managed-process",
            "{\"process_id\":\"tree\",\"command\":\"sh\",\"args\":[\"-c\"," + args + "]}");
    await().atMost(patience(10)).until(() -> processesWith(id, marker) >= 1);

    Answer stopped = box().delete("/v1/sessions/" + id + "/managed-process/tree");

    assertThat(stopped.status()).isEqualTo(200);
    assertThat(processesWith(id, marker)).as("processes of the stopped tree").isZero();
  }

  @Test
  void processMemoryLimit_killsAProcessThatOutgrowsIt_whenDeclared(TestReporter reporter) {
    if (!capabilities().contains(BoxCapabilities.PROCESS_MEMORY_LIMIT)) {
      note(reporter, "process_memory_limit", "not declared: not tested");
      assertThat(capabilities()).doesNotContain(BoxCapabilities.PROCESS_MEMORY_LIMIT);
      return;
    }
    String id = session("proc-mem");
    box().post("/v1/sessions/" + id, "{\"memory_mb\":512}");
    String grow = "x=$(head -c %d /dev/zero | tr '\\000' a); echo survived ${#x}";

    int small = runManaged(id, "small", grow.formatted(10_000_000), 64);
    int big = runManaged(id, "big", grow.formatted(200_000_000), 64);

    assertThat(small).as("exit code within the process limit").isZero();
    assertThat(big).as("exit code beyond the process limit").isNotZero();
  }

  /** Runs {@code script} as a managed process with a memory limit and returns its exit code. */
  private int runManaged(String session, String processId, String script, int memoryMb) {
    Answer started =
        box()
            .post(
                "/v1/sessions/" + session + "/managed-process",
                "{\"process_id\":\"%s\",\"command\":\"sh\",\"args\":[\"-c\",%s],\"memory_mb\":%d}"
                    .formatted(processId, BoxHttp.quote(script), memoryMb));
    assertThat(started.status()).as("%s", started).isEqualTo(201);
    String path = "/v1/sessions/" + session + "/managed-process/" + processId;
    await().atMost(patience(60)).until(() -> box().get(path).text("status").equals("exited"));
    return box().get(path).body().path("exit_code").asInt();
  }

  // --- helpers ---------------------------------------------------------------------------------

  /** The spec fields that make {@code dir} a session's /workspace in {@code mode}. */
  private static String hostPath(Path dir, String mode) {
    return "\"host_path\":"
        + BoxHttp.quote(dir.toString())
        + ",\"host_path_mode\":\""
        + mode
        + "\"";
  }

  protected final BoxHttp box() {
    return started(server).http;
  }

  private JsonNode health() {
    return started(server).health;
  }

  private Path hostDir() {
    return started(hostDir);
  }

  private ServerFleet fleet() {
    return started(server).fleet;
  }

  private Set<String> capabilities() {
    Set<String> caps = new HashSet<>();
    health().path("capabilities").forEach(c -> caps.add(c.asText()));
    return caps;
  }

  /**
   * Whether the backend mounts host directories ({@link BoxCapabilities#HOST_PATHS}); when it does
   * not, checks that a session whose spec has {@code hostSpec} is refused and nothing is made.
   */
  private boolean mountsHostPaths(String id, String hostSpec) {
    if (capabilities().contains(BoxCapabilities.HOST_PATHS)) {
      return true;
    }
    Answer a = box().exec(id, "true", hostSpec);
    assertThat(a.status()).as("%s", a).isEqualTo(400);
    assertThat(a.errorCode()).isEqualTo("validation_error");
    assertThat(a.errorMessage()).contains("host_path");
    assertThat(box().get("/v1/sessions/" + id).status()).as("no session was made").isEqualTo(404);
    return false;
  }

  /** Publishes what a test found or did not test, and prints it for the build log. */
  private void note(TestReporter reporter, String key, String value) {
    reporter.publishEntry(key, value);
    System.out.println("[conformance " + backendName() + "] " + key + ": " + value);
  }

  /** Whether the backend enforces {@code limit}; when not, checks that health says so. */
  private boolean enforces(String limit, TestReporter reporter) {
    String how = health().path("enforced").path(limit).asText("");
    assertThat(how).as("/v1/health must say how %s is enforced, or 'none'", limit).isNotBlank();
    if (how.equals("none")) {
      note(reporter, limit, "declared not enforced ('none'): not tested");
      return false;
    }
    return true;
  }

  /** A fresh session id on the main server, deleted after the test. */
  protected final String session(String name) {
    String id =
        name + "-" + counter.incrementAndGet() + "-" + UUID.randomUUID().toString().substring(0, 6);
    sessions.add(id);
    return id;
  }

  /** A number unlikely to appear anywhere else, usable as {@code sleep}'s argument. */
  private static String marker() {
    return Long.toString(900_000_000L + ThreadLocalRandom.current().nextLong(99_999_999L));
  }

  /** How many processes in the session's sandbox have {@code marker} in their command line. */
  private int processesWith(String session, String marker) {
    // The bracket keeps the scanning shell and grep themselves from matching.
    String pattern = "[" + marker.charAt(0) + "]" + marker.substring(1);
    Answer a =
        box()
            .exec(
                session,
                "for f in /proc/[0-9]*/cmdline; do tr '\\000' ' ' < \"$f\"; echo; done 2>/dev/null"
                    + " | grep -c '"
                    + pattern
                    + "'",
                "");
    return Integer.parseInt(a.stdout().strip());
  }

  private Set<String> leftoversOf(String sandbox) {
    return leftovers().stream().filter(s -> s.contains(sandbox)).collect(Collectors.toSet());
  }

  private void awaitGone(String sandbox) {
    await()
        .atMost(patience(20))
        .pollInterval(Duration.ofMillis(200))
        .untilAsserted(() -> assertThat(leftoversOf(sandbox)).isEmpty());
  }

  private void awaitNothingNewSince(Set<String> before) {
    await()
        .atMost(patience(20))
        .pollInterval(Duration.ofMillis(200))
        .untilAsserted(() -> assertThat(difference(leftovers(), before)).isEmpty());
  }

  private static Set<String> difference(Set<String> a, Set<String> b) {
    Set<String> d = new LinkedHashSet<>(a);
    d.removeAll(b);
    return d;
  }

  /** The interface names in the text of /proc/net/dev. */
  private static List<String> interfaces(String procNetDev) {
    return procNetDev
        .lines()
        .filter(line -> line.contains(":"))
        .map(line -> line.substring(0, line.indexOf(':')).strip())
        .toList();
  }

  /** A host directory every sandbox user may write (container backends run as uid 1000). */
  private Path writableHostDir(String name) throws IOException {
    Path dir = Files.createDirectory(hostDir().resolve(name + "-" + counter.incrementAndGet()));
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
    return dir;
  }
}
