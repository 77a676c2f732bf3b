package dev.box.backend.boxlite;

import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.core.backend.ProcessPrelude;
import dev.box.core.backend.ProcessSpec;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxProcess;
import dev.box.core.backend.TaggedTree;
import java.io.IOException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One session's BoxLite box. Every process is an execution of {@code /bin/sh -c} Box's {@link
 * ProcessPrelude}, its command, working directory and limits in the execution's environment, never
 * on a command line; each carries a tag ({@link TaggedTree}) by which its whole tree is signalled
 * inside the box.
 */
final class BoxliteSandbox implements Sandbox {
  private static final Logger log = LoggerFactory.getLogger(BoxliteSandbox.class);
  private static final Duration HELPER_TIMEOUT = Duration.ofSeconds(30);
  private static final String PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

  /** The states of a box that still holds its processes. */
  private static final Set<String> LIVE = Set.of("configured", "running", "paused");

  private final String id;
  private final BoxliteApi api;
  private final AtomicBoolean destroyed = new AtomicBoolean();

  BoxliteSandbox(String id, BoxliteApi api) {
    this.id = id;
    this.api = api;
  }

  @Override
  public String id() {
    return id;
  }

  @Override
  public boolean isAlive() {
    try {
      return !destroyed.get() && LIVE.contains(String.valueOf(api.status(id)));
    } catch (IOException e) {
      // Unknown is not dead: a box is recreated only when BoxLite says it is gone.
      log.warn("cannot tell whether BoxLite box {} runs: {}", id, e.toString());
      return true;
    }
  }

  @Override
  public SandboxProcess spawn(ProcessSpec spec) {
    spec.refuseTerminal(
        "the boxlite backend gives no terminal: its processes are BoxLite executions without a"
            + " pseudo-terminal");
    String tag = HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
    Map<String, String> env = new LinkedHashMap<>();
    env.put("PATH", PATH);
    env.putAll(ProcessPrelude.environment(spec, spec.memoryMb() > 0 ? spec.memoryMb() * 1024L : 0));
    env.put(TaggedTree.TAG_VARIABLE, tag);
    try {
      return start(ProcessPrelude.SCRIPT, env, tag, spec.stdin());
    } catch (IOException e) {
      throw new BoxException(
          BoxErrorCode.BACKEND_UNAVAILABLE,
          "cannot start a process in BoxLite box " + id + ": " + e.getMessage(),
          e);
    }
  }

  private BoxliteProcess start(String script, Map<String, String> env, String tag, boolean stdin)
      throws IOException {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("command", "/bin/sh");
    body.put("args", List.of("-c", script, "sh"));
    body.put("env", env);
    body.put("working_dir", "/");
    body.put("tty", false);
    String execId = api.exec(id, body);
    try {
      return BoxliteProcess.attach(this, api, execId, tag, stdin);
    } catch (IOException e) {
      killExecution(execId);
      throw e;
    }
  }

  /**
   * Signals the process tree tagged {@code tag} with {@code signal} ({@code TERM} or {@code KILL})
   * by running {@link TaggedTree#SIGNAL_SCRIPT} in the box, waiting for it up to {@link
   * #HELPER_TIMEOUT}.
   */
  void signalTree(String tag, String signal) {
    if (destroyed.get()) {
      return;
    }
    Map<String, String> env = Map.of("__BOX_KILL", tag, "__BOX_SIG", signal, "PATH", PATH);
    try {
      BoxliteProcess helper = start(TaggedTree.SIGNAL_SCRIPT, env, "", false);
      helper.stdout().close();
      helper.stderr().close();
      OptionalInt code = helper.waitFor(HELPER_TIMEOUT);
      if (code.isEmpty() || code.getAsInt() != 0) {
        log.warn("signalling a process tree in {} failed (exit {})", id, code);
        helper.release();
      }
    } catch (IOException e) {
      log.warn("signalling a process tree in {} failed: {}", id, e.toString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Sends {@code signal} to the execution through BoxLite. */
  void signalExecution(String execId, int signal) {
    try {
      api.signal(id, execId, signal);
    } catch (IOException e) {
      log.debug("signal {} to {} in {} failed: {}", signal, execId, id, e.toString());
    }
  }

  /** Kills the execution with SIGKILL through BoxLite, which evicts it. */
  void killExecution(String execId) {
    try {
      api.kill(id, execId);
    } catch (IOException e) {
      log.debug("killing {} in {} failed: {}", execId, id, e.toString());
    }
  }

  @Override
  public void destroy() {
    if (!destroyed.compareAndSet(false, true)) {
      return;
    }
    try {
      api.remove(id);
    } catch (IOException e) {
      log.warn("removing BoxLite box {} failed: {}", id, e.toString());
    }
  }
}
