package dev.box.backend.boxlite;

import dev.box.core.backend.ProcessPrelude;
import dev.box.core.backend.ProcessSpec;
import dev.box.core.backend.TaggedTree;
import dev.box.remote.RemoteSandbox;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One session's BoxLite box. Every process is an execution of {@code /bin/sh -c} Box's {@link
 * ProcessPrelude}, its command, working directory and limits in the execution's environment, never
 * on a command line; each carries a tag ({@link TaggedTree}) by which its whole tree is signalled
 * inside the box.
 */
final class BoxliteSandbox extends RemoteSandbox {
  private static final Logger log = LoggerFactory.getLogger(BoxliteSandbox.class);

  /** The states of a box that still holds its processes. */
  private static final Set<String> LIVE = Set.of("configured", "running", "paused");

  private static final Kind KIND =
      new Kind(
          "BoxLite box",
          "the boxlite backend gives no terminal: its processes are BoxLite executions without a"
              + " pseudo-terminal");

  private final BoxliteApi api;

  BoxliteSandbox(String id, BoxliteApi api) {
    super(id, KIND);
    this.api = api;
  }

  @Override
  protected boolean running() throws IOException {
    return LIVE.contains(String.valueOf(api.status(id())));
  }

  @Override
  protected BoxliteProcess start(ProcessSpec spec, String tag) throws IOException {
    return start(ProcessPrelude.SCRIPT, environment(spec, tag, Map.of()), tag, spec.stdin());
  }

  private BoxliteProcess start(String script, Map<String, String> env, String tag, boolean stdin)
      throws IOException {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("command", "/bin/sh");
    body.put("args", List.of("-c", script, "sh"));
    body.put("env", env);
    body.put("working_dir", "/");
    body.put("tty", false);
    String execId = api.exec(id(), body);
    try {
      return BoxliteProcess.attach(this, api, execId, tag, stdin);
    } catch (IOException e) {
      killExecution(execId);
      throw e;
    }
  }

  @Override
  public void signalTree(String tag, String signal) {
    if (destroyed()) {
      return;
    }
    try {
      BoxliteProcess helper =
          start(TaggedTree.SIGNAL_SCRIPT, signalEnvironment(tag, signal), "", false);
      helper.stdout().close();
      helper.stderr().close();
      OptionalInt code = helper.waitFor(HELPER_TIMEOUT);
      if (code.isEmpty() || code.getAsInt() != 0) {
        log.warn("signalling a process tree in {} failed (exit {})", id(), code);
        helper.release();
      }
    } catch (IOException e) {
      log.warn("signalling a process tree in {} failed: {}", id(), e.toString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Sends {@code signal} to the execution through BoxLite. */
  void signalExecution(String execId, int signal) {
    try {
      api.signal(id(), execId, signal);
    } catch (IOException e) {
      log.debug("signal {} to {} in {} failed: {}", signal, execId, id(), e.toString());
    }
  }

  /** Kills the execution with SIGKILL through BoxLite, which evicts it. */
  void killExecution(String execId) {
    try {
      api.kill(id(), execId);
    } catch (IOException e) {
      log.debug("killing {} in {} failed: {}", execId, id(), e.toString());
    }
  }

  @Override
  protected void remove() {
    try {
      api.remove(id());
    } catch (IOException e) {
      log.warn("removing BoxLite box {} failed: {}", id(), e.toString());
    }
  }
}
