package dev.box.core.agent;

import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The deadlines of one {@link AgentLink}: how long its agent may take to answer, and the timer that
 * enforces every deadline of the link. The timer belongs to the backend that owns the link, so that
 * servers in one JVM share none and one that closes stops only its own.
 *
 * @param reply how long the agent may take to answer a request or open a stream
 * @param timers runs the deadlines
 */
public record LinkDeadlines(Duration reply, ScheduledExecutorService timers) {

  /** Runs {@code action} after {@code timeout} unless the returned future is cancelled first. */
  ScheduledFuture<?> after(Duration timeout, Runnable action) {
    return timers.schedule(action, timeout.toNanos(), TimeUnit.NANOSECONDS);
  }
}
