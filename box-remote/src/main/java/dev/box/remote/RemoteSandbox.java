package dev.box.remote;

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
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A session's remote machine. Every process runs {@code /bin/sh -c} Box's {@link ProcessPrelude}
 * with its command, working directory and limits in the environment, never on a command line, and
 * carries a tag ({@link TaggedTree}) by which its whole tree is signalled inside the machine. A
 * machine whose state cannot be read is taken as alive: it is recreated only when the service says
 * it is gone.
 */
public abstract class RemoteSandbox implements Sandbox {
  private static final Logger log = LoggerFactory.getLogger(RemoteSandbox.class);

  /** How long a helper script in the machine (a tree's signal) may take. */
  protected static final Duration HELPER_TIMEOUT = Duration.ofSeconds(30);

  /** The search path of every process, before the caller's own environment. */
  protected static final String PATH =
      "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

  /**
   * What a backend's machines are, the same for all of them.
   *
   * @param noun what the service calls a machine, for messages ({@code "E2B sandbox"})
   * @param noTerminal why a terminal is refused
   */
  public record Kind(String noun, String noTerminal) {}

  private final AtomicBoolean destroyed = new AtomicBoolean();
  private final String id;
  private final Kind kind;

  /**
   * @param id the service's id of the machine
   * @param kind what the machine is
   */
  protected RemoteSandbox(String id, Kind kind) {
    this.id = id;
    this.kind = kind;
  }

  @Override
  public final String id() {
    return id;
  }

  @Override
  public final boolean isAlive() {
    if (destroyed.get()) {
      return false;
    }
    try {
      return running();
    } catch (IOException e) {
      log.warn("cannot tell whether {} {} runs: {}", kind.noun(), id, e.toString());
      return true;
    }
  }

  @Override
  public final SandboxProcess spawn(ProcessSpec spec) {
    spec.refuseTerminal(kind.noTerminal());
    String tag = HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
    try {
      return start(spec, tag);
    } catch (IOException e) {
      throw new BoxException(
          BoxErrorCode.BACKEND_UNAVAILABLE,
          "cannot start a process in " + kind.noun() + " " + id + ": " + e.getMessage(),
          e);
    }
  }

  @Override
  public final void destroy() {
    if (destroyed.compareAndSet(false, true)) {
      remove();
    }
  }

  /** Whether {@link #destroy()} has run. */
  protected final boolean destroyed() {
    return destroyed.get();
  }

  /** Whether the service says the machine still holds its processes. */
  protected abstract boolean running() throws IOException;

  /** Starts the process {@code spec}, tagged {@code tag} (see {@link #environment}). */
  protected abstract SandboxProcess start(ProcessSpec spec, String tag) throws IOException;

  /** Removes the machine; once, after which {@link #destroyed()} is true. Logs what fails. */
  protected abstract void remove();

  /**
   * Signals the process tree tagged {@code tag} with {@code signal} ({@code TERM} or {@code KILL})
   * by running {@link TaggedTree#SIGNAL_SCRIPT} in the machine, waiting up to {@link
   * #HELPER_TIMEOUT}.
   */
  public abstract void signalTree(String tag, String signal);

  /**
   * The environment of the process {@code spec} tagged {@code tag}: {@link #PATH}, then {@code
   * base}, then the prelude's variables (the caller's own among them, which win).
   */
  protected static Map<String, String> environment(
      ProcessSpec spec, String tag, Map<String, String> base) {
    Map<String, String> env = new LinkedHashMap<>();
    env.put("PATH", PATH);
    env.putAll(base);
    env.putAll(ProcessPrelude.environment(spec, spec.memoryMb() > 0 ? spec.memoryMb() * 1024L : 0));
    env.put(TaggedTree.TAG_VARIABLE, tag);
    return env;
  }

  /** The environment of {@link TaggedTree#SIGNAL_SCRIPT} sending {@code signal} to {@code tag}. */
  protected static Map<String, String> signalEnvironment(String tag, String signal) {
    return Map.of("__BOX_KILL", tag, "__BOX_SIG", signal, "PATH", PATH);
  }
}
