package dev.box.backend.kubernetes;

import dev.box.api.BoxSpec;
import dev.box.core.backend.PoolLevel;
import dev.box.core.backend.SandboxSpec;
import dev.box.sandbox.SandboxShape;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The tenant's warm pods: up to {@code size} pods of the {@linkplain SandboxShape#pooled pooled
 * shape}, each with its own Secret and NetworkPolicy, waiting in the sandbox namespace with the
 * label {@value #LABEL}{@code =}{@value #FREE}. Every replica of the tenant shares them.
 *
 * <p>A session of the pooled shape takes a free pod with one API call: a JSON patch whose first
 * operation tests that the pod is still free, then takes the label off and annotates the pod with
 * the session's id. The API server applies a patch atomically, so of two replicas patching one pod
 * one fails the test and tries the next. The session's record (its Secret, {@link Pods}) then names
 * the pod; when another replica created that record first, the taken pod is removed and the session
 * is the one the record names. A background task on the backend's timer refills the pool behind the
 * takes, never in a session's start.
 *
 * <p>With {@code k8s_workload=sandbox} the pool's pods are made by agent-sandbox's controller like
 * the sessions' ({@link AgentSandboxes}): the label is on each pod's Sandbox and in its pod
 * template, and the take patches the Sandbox, in one call as well, testing the Sandbox's label and
 * removing both (the controller then removes it from the pod).
 */
final class Pool implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Pool.class);

  /** The label of a pool pod, while it waits. */
  static final String LABEL = Labels.POOL;

  /** The value of {@link #LABEL} of a pod no session has taken. */
  static final String FREE = "free";

  /** How often the pool is checked and refilled. */
  private static final long REFILL_SECONDS = 2;

  private final Pods pods;
  private final int size;
  private final ScheduledExecutorService timers;
  private final AtomicBoolean refilling = new AtomicBoolean();
  private final ReentrantLock changing = new ReentrantLock();
  private final AtomicBoolean stopped = new AtomicBoolean();
  private final AtomicInteger idle = new AtomicInteger();

  /**
   * @param size how many free pods the tenant keeps; 0 for no pool
   * @param timers the backend's timer, on which the refill is scheduled
   */
  Pool(Pods pods, int size, ScheduledExecutorService timers) {
    this.pods = pods;
    this.size = size;
    this.timers = timers;
  }

  /** Starts refilling the pool in the background; nothing without a pool. */
  void start() {
    if (size > 0) {
      timers.scheduleWithFixedDelay(this::refillBehind, 0, REFILL_SECONDS, TimeUnit.SECONDS);
    }
  }

  /**
   * Whether {@code spec} is of the pooled shape and runs the pool's image: the default spec, not
   * persistent (a persistent session's workspace is a claim).
   */
  boolean serves(SandboxSpec spec) {
    return size > 0
        && !spec.persistent()
        && SandboxShape.pooled().equals(SandboxShape.of(spec))
        && pods.image(spec.image()).equals(pods.image(BoxSpec.DEFAULT_IMAGE));
  }

  /**
   * Takes a free running pod for the session {@code spec}, whose record is {@code record}, and
   * returns the session's pod (another one when another replica made the record first); null when
   * the pool does not serve the spec or has no free running pod.
   */
  Pods.@Nullable Placed take(SandboxSpec spec, String record) {
    if (!serves(spec)) {
      return null;
    }
    for (PodMaker.Warm candidate : free()) {
      Pod pod = candidate.pod();
      if (pod == null || !Pods.isReady(pod)) {
        continue;
      }
      String name = candidate.name();
      if (!claim(candidate, Map.of(Labels.SESSION_ID, spec.sessionId()))) {
        continue;
      }
      timers.execute(this::refillBehind);
      Pods.Placed own = pods.placed(name);
      if (own == null) {
        pods.remove(name);
        continue;
      }
      Pods.Placed placed;
      try {
        placed = pods.createRecord(record, name, own.secret());
      } catch (KubernetesClientException e) {
        pods.remove(name);
        throw e;
      }
      if (!placed.name().equals(name)) {
        pods.remove(name);
      }
      return placed;
    }
    return null;
  }

  /** The tenant's free pool pods (or their Sandboxes, {@link AgentSandboxes}). */
  private List<PodMaker.Warm> free() {
    return pods.maker()
        .marked(Map.of(Labels.MANAGED_BY, Labels.BOX, Labels.TENANT, pods.tenant(), LABEL, FREE));
  }

  /**
   * Takes {@code warm} out of the pool with {@code annotations} in one patch, unless another
   * replica took it first; whether this call took it.
   */
  private boolean claim(PodMaker.Warm warm, Map<String, String> annotations) {
    String name = warm.name();
    Map<String, String> merged = new HashMap<>(warm.annotations());
    merged.putAll(annotations);
    String key = "/" + LABEL.replace("~", "~0").replace("/", "~1");
    List<String> labelMaps = pods.maker().labelMaps();
    List<Map<String, Object>> patch = new ArrayList<>();
    patch.add(Map.of("op", "test", "path", labelMaps.getFirst() + key, "value", FREE));
    for (String labels : labelMaps) {
      patch.add(Map.of("op", "remove", "path", labels + key));
    }
    patch.add(Map.of("op", "add", "path", "/metadata/annotations", "value", merged));
    try {
      pods.maker().patch(name, Serialization.asJson(patch));
      return true;
    } catch (KubernetesClientException e) {
      // The test failed (another replica took the pod), or the pod went.
      log.debug("pool pod {} not taken: {}", name, e.getMessage());
      return false;
    }
  }

  /** Runs a refill on a thread of its own, unless one runs: the timer only starts it. */
  private void refillBehind() {
    if (!stopped.get() && refilling.compareAndSet(false, true)) {
      Thread.ofVirtual()
          .name("box-kubernetes-pool")
          .start(
              () -> {
                changing.lock();
                try {
                  if (!stopped.get()) {
                    refill();
                  }
                } catch (KubernetesClientException e) {
                  log.warn("cannot refill the pool of warm pods: {}", e.getMessage());
                } finally {
                  changing.unlock();
                  refilling.set(false);
                }
              });
    }
  }

  /** Removes the free pods that ended, and makes the missing ones. */
  private void refill() {
    int waiting = 0;
    int ready = 0;
    for (PodMaker.Warm warm : free()) {
      Pod pod = warm.pod();
      if (pod != null && Pods.isOver(pod)) {
        if (claim(warm, Map.of())) {
          pods.remove(warm.name());
        }
      } else {
        waiting++;
        ready += pod != null && Pods.isReady(pod) ? 1 : 0;
      }
    }
    idle.set(ready);
    for (int i = waiting; i < size && !stopped.get(); i++) {
      make();
    }
  }

  /** Makes one free pod of the pooled shape, its Secret first. */
  private void make() {
    String name = "box-pool-" + HexFormat.of().formatHex(Pods.freshToken(), 0, 8);
    pods.createPoolSecret(name, Pods.freshToken());
    SandboxSpec spec =
        SandboxShape.pooled()
            .spec(name, "pool", BoxSpec.DEFAULT_IMAGE, Path.of(BoxSpec.DEFAULT_MOUNT_PATH));
    Map<String, String> labels = new HashMap<>(pods.labels(name));
    labels.put(LABEL, FREE);
    pods.createPod(name, labels, Map.of(), spec, null);
  }

  /** How many free pods run, as the last refill counted them, of how many. */
  @Nullable PoolLevel level() {
    return size > 0 ? new PoolLevel(idle.get(), size) : null;
  }

  /**
   * Stops refilling and, once a refill under way has ended, removes the tenant's free pods (each
   * taken first, so that no replica takes one meanwhile); for the last replica that stops.
   */
  void drain() {
    stopped.set(true);
    changing.lock();
    try {
      for (PodMaker.Warm warm : free()) {
        if (claim(warm, Map.of())) {
          pods.remove(warm.name());
        }
      }
      idle.set(0);
    } finally {
      changing.unlock();
    }
  }

  /**
   * Stops refilling, once a refill under way has ended (the client closes after); the free pods
   * stay for the other replicas.
   */
  @Override
  public void close() {
    stopped.set(true);
    changing.lock();
    changing.unlock();
  }
}
