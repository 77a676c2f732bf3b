package dev.box.sandbox;

import dev.box.api.BoxSpec;
import dev.box.core.backend.BackendStatus;
import dev.box.core.backend.MountOwnership;
import dev.box.core.backend.PoolLevel;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxSpec;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * A backend's pre-started sandboxes, or none: the {@link SandboxPool} of the {@linkplain
 * SandboxShape#pooled pooled shape} and the slots it hands workspaces over with, kept in {@code
 * <dataDir>/<backend>-pool/<instance>}. Every pooled backend (bubblewrap, nsjail, the container
 * engines) wires its pool the same way; this is that wiring, so that each only says how its slots
 * open and which specs it serves beyond their shape.
 *
 * <p>Thread-safe, as the pool is.
 */
public final class PreStarted implements AutoCloseable {
  private final Path poolRoot;
  private final String instanceId;
  private final SlotStore store;
  private final @Nullable SandboxPool pool;
  private final SandboxPool.@Nullable Slots slots;

  /**
   * How a backend's workspace slots open in one instance's directory, and how those that crashed
   * instances left are swept.
   */
  public interface SlotStore {
    /** The slots in {@code instanceDir}, or null (logged) when the host cannot provide them. */
    SandboxPool.@Nullable Slots open(Path instanceDir);

    /** Removes what instances other than {@code instanceId} left in {@code poolRoot}. */
    void removeOthers(Path poolRoot, String instanceId);
  }

  private PreStarted(
      Path poolRoot,
      String instanceId,
      SlotStore store,
      @Nullable SandboxPool pool,
      SandboxPool.@Nullable Slots slots) {
    this.poolRoot = poolRoot;
    this.instanceId = instanceId;
    this.store = store;
    this.pool = pool;
    this.slots = slots;
  }

  /**
   * Opens the slots and starts filling the pool, when {@code size} is above 0 and the slots open;
   * otherwise there is no pool, and nothing is made on the host.
   *
   * @param backend the backend's name: of its pool directory and its refill threads
   * @param dataDir the server's data directory
   * @param size how many sandboxes wait at most; 0 for none (pass 0 too when the backend is
   *     unavailable)
   * @param accepts what a spec of the pooled shape must also satisfy to take a sandbox
   * @param starter starts one sandbox of a spec, as the backend does for a session
   */
  public static PreStarted open(
      String backend,
      Path dataDir,
      String instanceId,
      int size,
      SlotStore store,
      Predicate<SandboxSpec> accepts,
      Function<SandboxSpec, Sandbox> starter,
      BackendRuntime runtime) {
    Path poolRoot = dataDir.toAbsolutePath().normalize().resolve(backend + "-pool");
    SandboxPool.Slots slots = size > 0 ? store.open(poolRoot.resolve(instanceId)) : null;
    SandboxPool pool =
        slots == null
            ? null
            : new SandboxPool(
                SandboxShape.pooled(),
                size,
                instanceId,
                BoxSpec.DEFAULT_IMAGE,
                slots,
                accepts,
                starter,
                runtime.cachedThreads("box-" + backend + "-pool"),
                SandboxPool.WAIT_FOR_START,
                runtime.foreground());
    return new PreStarted(poolRoot, instanceId, store, pool, slots);
  }

  /**
   * {@code status} with the health report's {@code pool} entry: how many sandboxes of which shape
   * wait, or, without a pool, {@code none} and {@code whyNone}; {@code note} follows either. An
   * unavailable status is returned as it is.
   */
  public BackendStatus reported(BackendStatus status, String whyNone, String note) {
    if (!status.available()) {
      return status;
    }
    SandboxPool p = pool;
    Map<String, String> enforced = new TreeMap<>(status.enforced());
    enforced.put(
        "pool",
        (p == null
                ? "none: " + whyNone
                : p.idle()
                    + " of "
                    + p.size()
                    + " pre-started sandboxes idle ("
                    + p.shape().describe()
                    + ")")
            + note);
    return new BackendStatus(
        status.name(), status.available(), status.reason(), enforced, status.capabilities());
  }

  /**
   * How full the pool is; null without one (see {@link
   * dev.box.core.backend.SandboxBackend#poolLevel()}).
   */
  public @Nullable PoolLevel level() {
    SandboxPool p = pool;
    return p == null ? null : new PoolLevel(p.idle(), p.size());
  }

  /** How many sandboxes sessions have taken from the pool so far. */
  public long taken() {
    SandboxPool p = pool;
    return p == null ? 0 : p.taken();
  }

  /** The slots, while there is a pool. */
  public SandboxPool.@Nullable Slots slots() {
    return slots;
  }

  /**
   * A waiting sandbox for {@code spec} when the pool serves it, its workspace checked and handed to
   * the sandbox user ({@code uid}) as for a fresh start, then bound in it; null when the caller
   * must start one as usual.
   *
   * @param workspaces the directory of private workspaces
   */
  public @Nullable Sandbox take(SandboxSpec spec, Path workspaces, int uid) {
    SandboxPool p = pool;
    if (p == null || !p.serves(spec)) {
      return null;
    }
    MountOwnership.prepare(spec, workspaces, uid);
    return p.take(spec);
  }

  /**
   * Destroys every waiting sandbox and starts new ones: the backend's settings that shape a sandbox
   * beyond its spec changed ({@link SandboxPool#drain}).
   */
  public void drain() {
    SandboxPool p = pool;
    if (p != null) {
      p.drain();
    }
  }

  /** Removes the slots that other (crashed) instances of this data directory left. */
  public void removeOthers() {
    store.removeOthers(poolRoot, instanceId);
  }

  /** Closes the pool (its waiting sandboxes die), then the slots. */
  @Override
  public void close() {
    SandboxPool p = pool;
    if (p != null) {
      p.close();
    }
    SandboxPool.Slots s = slots;
    if (s != null) {
      s.close();
    }
  }
}
