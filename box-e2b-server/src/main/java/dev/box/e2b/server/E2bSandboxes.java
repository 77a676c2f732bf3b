package dev.box.e2b.server;

import dev.box.api.BoxSessionNotFoundException;
import dev.box.api.BoxSessionState;
import dev.box.core.session.SessionManager;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sandboxes made through E2B's API, each an ordinary Box session (persistent: it is not reaped
 * when idle, and outlives a restart of the server, as its {@link SandboxRecords record} does), and
 * their end of life: at a sandbox's {@code endAt} its session is deleted. A sandbox whose session
 * is gone (deleted through Box's API) is gone too, and forgotten at the next look.
 *
 * <p>Thread-safe. The timers run on one daemon thread of their own; {@link #close()} stops them and
 * leaves the sessions to the server's shutdown.
 */
final class E2bSandboxes implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(E2bSandboxes.class);

  private final SessionManager sessions;
  private final SandboxRecords records;
  private final Clock clock;
  private final Map<String, E2bSandbox> byId = new ConcurrentHashMap<>();
  private final Map<String, ScheduledFuture<?>> timers = new ConcurrentHashMap<>();
  private final ScheduledExecutorService timer;

  /**
   * The sandboxes recorded in {@code records} whose sessions are still there (persistent sessions
   * outlive a restart), their ends armed; the records of the others are removed.
   */
  E2bSandboxes(SessionManager sessions, SandboxRecords records) {
    this.sessions = sessions;
    this.records = records;
    this.clock = sessions.clock();
    this.timer =
        Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().name("box-e2b-timeouts").daemon().factory());
    for (E2bSandbox sandbox : records.load()) {
      if (sessions.list().stream().anyMatch(s -> s.sessionId().equals(sandbox.sessionId()))) {
        byId.put(sandbox.sandboxId(), sandbox);
        arm(sandbox);
      } else {
        records.remove(sandbox.sandboxId());
      }
    }
  }

  /** The sessions the sandboxes are. */
  SessionManager sessions() {
    return sessions;
  }

  /** The time of the sessions. */
  Instant now() {
    return clock.instant();
  }

  /** Records {@code sandbox}, whose session exists, and arms its end. */
  void add(E2bSandbox sandbox) {
    records.save(sandbox);
    byId.put(sandbox.sandboxId(), sandbox);
    arm(sandbox);
    sandbox
        .log()
        .info(
            now(),
            "sandbox created from template "
                + sandbox.templateId()
                + " as session "
                + sandbox.sessionId()
                + ", ending at "
                + sandbox.endAt());
  }

  /** The live sandbox {@code id}, or null when it does not exist or its session is gone. */
  @Nullable E2bSandbox find(String id) {
    E2bSandbox sandbox = byId.get(id);
    if (sandbox == null) {
      return null;
    }
    try {
      sessions.get(sandbox.sessionId());
      return sandbox;
    } catch (BoxSessionNotFoundException e) {
      forget(sandbox);
      return null;
    }
  }

  /** The live sandbox {@code id}; throws E2B's not-found error when there is none. */
  E2bSandbox require(String id) {
    E2bSandbox sandbox = find(id);
    if (sandbox == null) {
      throw ApiError.notFound("sandbox " + id + " not found");
    }
    return sandbox;
  }

  /** Every live sandbox, oldest first. */
  List<E2bSandbox> list() {
    Set<String> live = sessions.list().stream().map(s -> s.sessionId()).collect(Collectors.toSet());
    for (E2bSandbox sandbox : byId.values()) {
      if (!live.contains(sandbox.sessionId())) {
        forget(sandbox);
      }
    }
    return byId.values().stream()
        .filter(s -> live.contains(s.sessionId()))
        .sorted(Comparator.comparing(E2bSandbox::startedAt).thenComparing(E2bSandbox::sandboxId))
        .toList();
  }

  /**
   * Moves the end of {@code sandbox} to {@code end} and returns the new record; a sandbox killed
   * meanwhile stays killed.
   */
  E2bSandbox endAt(E2bSandbox sandbox, Instant end) {
    E2bSandbox next = sandbox.endingAt(end);
    if (byId.replace(sandbox.sandboxId(), next) == null) {
      throw ApiError.notFound("sandbox " + sandbox.sandboxId() + " not found");
    }
    records.save(next);
    arm(next);
    next.log().info(now(), "sandbox ends at " + end);
    return next;
  }

  /** Whether the session of {@code sandbox} is paused. */
  boolean paused(E2bSandbox sandbox) {
    return sessions.get(sandbox.sessionId()).state() == BoxSessionState.PAUSED;
  }

  /**
   * Pauses {@code sandbox}: its processes freeze and its timeout stops counting until it is
   * resumed.
   *
   * @throws ApiError 409 when it is paused already, as E2B answers
   */
  void pause(E2bSandbox sandbox) {
    if (paused(sandbox)) {
      throw new ApiError(409, "sandbox " + sandbox.sandboxId() + " is already paused");
    }
    sessions.pause(sandbox.sessionId());
    sandbox.log().info(now(), "sandbox paused");
  }

  /**
   * Resumes {@code sandbox}, which then ends {@code timeoutSeconds} from now, and returns the new
   * record.
   */
  E2bSandbox resume(E2bSandbox sandbox, long timeoutSeconds) {
    sessions.resume(sandbox.sessionId());
    sandbox.log().info(now(), "sandbox resumed");
    return endAt(sandbox, now().plusSeconds(timeoutSeconds));
  }

  /**
   * Kills the sandbox {@code id}: deletes its session and forgets it.
   *
   * @return whether it existed
   */
  boolean kill(String id) {
    E2bSandbox sandbox = byId.get(id);
    if (sandbox == null) {
      return false;
    }
    forget(sandbox);
    try {
      sessions.delete(sandbox.sessionId());
      return true;
    } catch (BoxSessionNotFoundException e) {
      return false;
    }
  }

  private void forget(E2bSandbox sandbox) {
    if (byId.remove(sandbox.sandboxId(), sandbox)) {
      records.remove(sandbox.sandboxId());
    }
    ScheduledFuture<?> armed = timers.remove(sandbox.sandboxId());
    if (armed != null) {
      armed.cancel(false);
    }
  }

  private void arm(E2bSandbox sandbox) {
    long delay = Math.max(0, Duration.between(now(), sandbox.endAt()).toMillis() + 1);
    ScheduledFuture<?> next =
        timer.schedule(() -> expire(sandbox.sandboxId()), delay, TimeUnit.MILLISECONDS);
    ScheduledFuture<?> previous = timers.put(sandbox.sandboxId(), next);
    if (previous != null) {
      previous.cancel(false);
    }
  }

  /**
   * Kills the sandbox {@code id} if its end has come, else arms its timer again for its current end
   * (the delay is counted in milliseconds, and the end may have moved since).
   */
  private void expire(String id) {
    E2bSandbox sandbox = byId.get(id);
    if (sandbox == null) {
      return;
    }
    if (sandbox.endAt().isAfter(now())) {
      arm(sandbox);
      return;
    }
    try {
      if (paused(sandbox)) {
        // A paused sandbox does not time out: its resume sets a new end.
        return;
      }
    } catch (BoxSessionNotFoundException e) {
      forget(sandbox);
      return;
    }
    try {
      kill(id);
      log.info("E2B sandbox {} reached its timeout: session {} deleted", id, sandbox.sessionId());
    } catch (RuntimeException e) {
      log.warn("E2B sandbox {}: deleting session {} failed", id, sandbox.sessionId(), e);
    }
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
