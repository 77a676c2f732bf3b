package dev.box.backend.docker;

import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.time.Ticker;
import dev.box.core.backend.ProcessPrelude;
import dev.box.core.backend.ProcessSpec;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxProcess;
import dev.box.core.backend.SandboxUsage;
import dev.box.core.backend.TaggedTree;
import dev.box.guard.ExecAgent;
import dev.box.guard.SyscallGuard;
import dev.box.sandbox.engine.EngineClient;
import dev.box.sandbox.engine.EnginePaths;
import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.Channel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The container of one session: commands are exec'd into it as the sandbox user ({@link
 * ContainerCreateBody#SANDBOX_USER}), with the environment the container started with.
 *
 * <p>Every process an exec starts inherits a tag ({@code __BOX_TREE}) in its environment. To kill
 * the tree, a fixed script exec'd into the same container finds the tagged processes by their
 * {@code /proc/<pid>/environ}, adds their descendants (so a child started with an empty environment
 * is found too while its parent lives), and signals them all; with SIGKILL it repeats until none is
 * left. A process that both empties its environment and leaves its parent's tree escapes this; it
 * still dies with the session.
 *
 * <p>When the container has box-guard, every exec (the tree-kill script's too) starts through it,
 * so that no process in the container runs outside the filter.
 */
final class ContainerSandbox implements Sandbox {
  private static final Logger log = LoggerFactory.getLogger(ContainerSandbox.class);
  private static final Duration CALL_TIMEOUT = Duration.ofSeconds(30);
  private static final Duration KILL_TIMEOUT = Duration.ofSeconds(10);
  private static final Duration STATS_TIMEOUT = Duration.ofSeconds(10);

  /** Signals the tree tagged {@code $__BOX_KILL} with {@code $__BOX_SIG}; fixed text, no input. */
  static final String SIGNAL_TREE = TaggedTree.SIGNAL_SCRIPT;

  private final EngineClient engine;
  private final String name;
  private final String containerId;
  private final boolean guarded;
  private final Ticker ticker;
  private final @Nullable String root;
  private volatile @Nullable ContainerAgent agent;

  /**
   * @param guarded whether box-guard is mounted at {@value SyscallGuard#SANDBOX_PATH}
   * @param ticker the time processes measure how long they have run by
   * @param root the tag of the copied writable root the container started from, which it holds
   *     until it is removed ({@link ContainerRoots#use}); null when it started from its image
   */
  ContainerSandbox(
      EngineClient engine,
      String name,
      String containerId,
      boolean guarded,
      Ticker ticker,
      @Nullable String root) {
    this.engine = engine;
    this.name = name;
    this.containerId = containerId;
    this.guarded = guarded;
    this.ticker = ticker;
    this.root = root;
  }

  /** From now on, processes start through {@code agent} instead of the engine's exec API. */
  void useAgent(ContainerAgent agent) {
    this.agent = agent;
  }

  /** The container's id. */
  String containerId() {
    return containerId;
  }

  /** {@code program}, started through box-guard when the container has it. */
  private List<String> command(List<String> program) {
    return guarded ? SyscallGuard.sandboxCommand(program) : program;
  }

  @Override
  public String id() {
    return name;
  }

  @Override
  public boolean isAlive() {
    ContainerAgent current = agent;
    // The agent's link breaks (and ends the container) as soon as the container stops.
    return current != null ? current.usable() : running();
  }

  /**
   * The host pid of the container's init, as the engine reports it.
   *
   * @throws IOException when the engine cannot be asked or the init is not running
   */
  long initPid() throws IOException {
    EngineClient.Response inspected =
        engine.call("GET", "/containers/" + containerId + "/json", null, CALL_TIMEOUT);
    long initPid = inspected.json().path("State").path("Pid").asLong(0);
    if (!inspected.ok() || initPid <= 0) {
      throw new IOException("the container's init is not running: " + inspected.message());
    }
    return initPid;
  }

  /** Whether the engine says the container runs. */
  boolean running() {
    try {
      EngineClient.Response answer =
          engine.call("GET", "/containers/" + containerId + "/json", null, CALL_TIMEOUT);
      return answer.ok() && answer.json().path("State").path("Running").asBoolean(false);
    } catch (IOException e) {
      log.debug("cannot inspect container {}: {}", name, e.toString());
      return false;
    }
  }

  /**
   * The mounted exec agent's pipe; none for a container whose processes start through the engine.
   */
  @Override
  public @Nullable List<String> portPipe(int port) {
    return agent == null ? null : ExecAgent.pipeCommand(ExecAgent.SANDBOX_PATH, port);
  }

  @Override
  public SandboxProcess spawn(ProcessSpec spec) {
    ContainerAgent current = agent;
    if (current != null) {
      return current.spawn(spec);
    }
    spec.refuseTerminal(
        "this container backend gives no terminal here: its processes start through the engine,"
            + " as Box's exec agent is unavailable (no cgroup tree, or no agent for this host)");
    String tag = HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
    Map<String, String> env = new LinkedHashMap<>(ContainerCreateBody.BASE_ENV);
    env.putAll(ProcessPrelude.environment(spec, spec.memoryMb() > 0 ? spec.memoryMb() * 1024L : 0));
    env.put("__BOX_TREE", tag);
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("AttachStdin", spec.stdin());
    body.put("AttachStdout", true);
    body.put("AttachStderr", true);
    body.put("Tty", false);
    body.put("User", ContainerCreateBody.SANDBOX_USER);
    body.put("WorkingDir", "/");
    body.put("Env", envList(env));
    body.put("Cmd", command(List.of("/bin/sh", "-c", ProcessPrelude.SCRIPT, "sh")));
    try {
      String execId = createExec(body);
      EngineClient.Hijacked connection =
          engine.hijack(
              "/exec/" + execId + "/start", Map.of("Detach", false, "Tty", false), CALL_TIMEOUT);
      return new ContainerProcess(this, engine, execId, tag, connection, spec.stdin(), ticker);
    } catch (IOException e) {
      throw new BoxException(
          BoxErrorCode.INTERNAL_ERROR,
          "container backend error: cannot start a process in " + name + ": " + e.getMessage(),
          e);
    }
  }

  private String createExec(Map<String, Object> body) throws IOException {
    EngineClient.Response created =
        engine.call("POST", "/containers/" + containerId + "/exec", body, CALL_TIMEOUT);
    String execId = created.json().path("Id").asText("");
    if (!created.ok() || execId.isEmpty()) {
      throw EngineClient.engineError(created.status(), created.message());
    }
    return execId;
  }

  /**
   * Sends {@code signal} ({@code TERM} or {@code KILL}) to every process of the tree tagged {@code
   * tag}; with KILL, returns once none is left. When the script cannot run (for example the
   * container's process limit is exhausted by the tree itself), the container is killed: the tree
   * dies with it and the session is recreated on next use.
   */
  void signalTree(String tag, String signal) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("AttachStdout", true);
    body.put("AttachStderr", true);
    body.put("Tty", false);
    body.put("User", ContainerCreateBody.SANDBOX_USER);
    body.put(
        "Env",
        List.of(
            "__BOX_KILL=" + tag,
            "__BOX_SIG=" + signal,
            "PATH=" + ContainerCreateBody.BASE_ENV.get("PATH")));
    body.put("Cmd", command(List.of("/bin/sh", "-c", SIGNAL_TREE)));
    for (int attempt = 1; attempt <= 3; attempt++) {
      try {
        String execId = createExec(body);
        EngineClient.Hijacked connection =
            engine.hijack(
                "/exec/" + execId + "/start", Map.of("Detach", false, "Tty", false), KILL_TIMEOUT);
        // The script ends by itself within seconds; an engine that stalls must not hold a timeout.
        CompletableFuture<Void> deadline =
            CompletableFuture.runAsync(
                () -> closeQuietly(connection.channel()),
                CompletableFuture.delayedExecutor(KILL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS));
        try (InputStream in = connection.in();
            var channel = connection.channel()) {
          byte[] output = in.readAllBytes();
          deadline.cancel(false);
          EngineClient.Response state =
              engine.call("GET", "/exec/" + execId + "/json", null, CALL_TIMEOUT);
          int code = state.json().path("ExitCode").asInt(-1);
          if (code == 0) {
            return;
          }
          log.warn(
              "signalling a process tree in {} failed (exit {}): {}",
              name,
              code,
              printable(output));
        }
      } catch (IOException e) {
        log.warn("cannot signal a process tree in {}: {}", name, e.toString());
      }
    }
    if (signal.equals("KILL")) {
      log.warn("killing container {}: its process tree could not be killed from inside", name);
      try {
        engine.call("POST", "/containers/" + containerId + "/kill", null, CALL_TIMEOUT);
      } catch (IOException e) {
        log.warn("cannot kill container {}: {}", name, e.toString());
      }
    }
  }

  /**
   * The engine's one-shot stats of the container ({@link ContainerStats}); nothing when it cannot
   * be asked.
   */
  @Override
  public SandboxUsage usage() {
    try {
      EngineClient.Response answer =
          engine.call(
              "GET",
              "/containers/" + containerId + "/stats?stream=false&one-shot=true",
              null,
              STATS_TIMEOUT);
      return answer.ok() ? ContainerStats.usage(answer.json()) : SandboxUsage.UNKNOWN;
    } catch (IOException e) {
      log.debug("cannot read the stats of container {}: {}", name, e.toString());
      return SandboxUsage.UNKNOWN;
    }
  }

  /** Freezes the container through the engine ({@code POST /containers/{id}/pause}). */
  @Override
  public void pause() {
    setPaused("pause", true);
  }

  /** Thaws the container ({@code POST /containers/{id}/unpause}). */
  @Override
  public void resume() {
    setPaused("unpause", false);
  }

  /**
   * Asks the engine to {@code action} the container; the engine's conflict (it is already so) is
   * success when the container's state says it is {@code paused} as wanted.
   */
  private void setPaused(String action, boolean paused) {
    try {
      EngineClient.Response answer =
          engine.call("POST", "/containers/" + containerId + "/" + action, null, CALL_TIMEOUT);
      if (answer.ok() || (answer.status() == 409 && paused() == paused)) {
        return;
      }
      throw new BoxException(
          BoxErrorCode.INTERNAL_ERROR,
          "cannot " + action + " container " + name + ": " + answer.message());
    } catch (IOException e) {
      throw new BoxException(
          BoxErrorCode.INTERNAL_ERROR, "cannot " + action + " container " + name + ": " + e, e);
    }
  }

  /** Whether the engine says the container is paused. */
  private boolean paused() throws IOException {
    EngineClient.Response answer =
        engine.call("GET", "/containers/" + containerId + "/json", null, CALL_TIMEOUT);
    return answer.ok() && answer.json().path("State").path("Paused").asBoolean(false);
  }

  @Override
  public void destroy() {
    ContainerAgent current = agent;
    if (current != null) {
      current.close();
    }
    try {
      EngineClient.Response answer =
          engine.call("DELETE", EnginePaths.forceRemove(containerId), null, CALL_TIMEOUT);
      if (!answer.ok() && answer.status() != 404) {
        log.warn("cannot remove container {}: {}", name, answer.message());
      }
    } catch (IOException e) {
      log.warn("cannot remove container {}: {}", name, e.toString());
    }
    if (root != null) {
      // Refused while the container still exists: the next start's orphan cleanup removes it then.
      ContainerRoots.untag(engine, root);
    }
  }

  private static void closeQuietly(Channel channel) {
    try {
      channel.close();
    } catch (IOException e) {
      // Closing is all that is wanted.
    }
  }

  static List<String> envList(Map<String, String> env) {
    List<String> list = new ArrayList<>(env.size());
    env.forEach((k, v) -> list.add(k + "=" + v));
    return list;
  }

  private static String printable(byte[] multiplexed) {
    // Frames carry an 8-byte header; keep only the text for the log.
    StringBuilder text = new StringBuilder();
    int i = 0;
    while (i + 8 <= multiplexed.length) {
      int size =
          ((multiplexed[i + 4] & 0xff) << 24)
              | ((multiplexed[i + 5] & 0xff) << 16)
              | ((multiplexed[i + 6] & 0xff) << 8)
              | (multiplexed[i + 7] & 0xff);
      int end = Math.min(multiplexed.length, i + 8 + size);
      text.append(new String(multiplexed, i + 8, end - i - 8, StandardCharsets.UTF_8));
      i = end;
    }
    String line = text.toString().strip();
    return line.length() > 300 ? line.substring(0, 300) : line;
  }
}
