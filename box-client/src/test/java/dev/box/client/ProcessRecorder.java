package dev.box.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * A {@link ProcessListener} that records every call as an event, in order, for tests to read like a
 * script (after OkHttp's {@code WebSocketRecorder}). It also checks the listener contract: calls
 * never overlap, and nothing follows the last call.
 */
public final class ProcessRecorder implements ProcessListener {
  private static final Duration TIMEOUT = Duration.ofSeconds(30);

  /** One listener call. */
  public sealed interface Event {}

  /** {@link ProcessListener#onStdoutLine}. */
  public record Line(String text) implements Event {}

  /** {@link ProcessListener#onStdout}; tests read the bytes, they never compare events of it. */
  @SuppressWarnings("ArrayRecordComponent")
  public record Stdout(byte[] bytes, long offset) implements Event {}

  /** {@link ProcessListener#onExit}. */
  public record Exit(int code) implements Event {}

  /** {@link ProcessListener#onGap}. */
  public record Gap(long requested, long firstAvailable) implements Event {}

  /** {@link ProcessListener#onReconnect}. */
  public record Reconnect(long offset) implements Event {}

  /** {@link ProcessListener#onClose}. */
  public record Closed(int code, String reason) implements Event {}

  /** {@link ProcessListener#onFailure}. */
  public record Failed(Throwable failure) implements Event {}

  /** A broken listener contract, recorded so the test that reads on fails. */
  public record Violation(String what) implements Event {}

  private final List<Event> events = new CopyOnWriteArrayList<>();
  private final AtomicBoolean inCall = new AtomicBoolean();
  private final Object signal = new Object();
  private int read;

  @Override
  public void onStdoutLine(String line) {
    record(new Line(line));
  }

  @Override
  public void onStdout(byte[] bytes, long offset) {
    record(new Stdout(bytes, offset));
  }

  @Override
  public void onExit(int exitCode) {
    record(new Exit(exitCode));
  }

  @Override
  public void onGap(long requested, long firstAvailable) {
    record(new Gap(requested, firstAvailable));
  }

  @Override
  public void onReconnect(long offset) {
    record(new Reconnect(offset));
  }

  @Override
  public void onClose(int code, String reason) {
    record(new Closed(code, reason));
  }

  @Override
  public void onFailure(Throwable failure) {
    record(new Failed(failure));
  }

  private void record(Event event) {
    if (!inCall.compareAndSet(false, true)) {
      events.add(new Violation("a call overlapped another: " + event));
    }
    if (!events.isEmpty()
        && (events.getLast() instanceof Closed || events.getLast() instanceof Failed)) {
      events.add(new Violation("a call after the last one: " + event));
    }
    events.add(event);
    inCall.set(false);
    synchronized (signal) {
      signal.notifyAll();
    }
  }

  /** The next event not read yet, waiting for it. */
  public Event next() {
    long deadline = System.nanoTime() + TIMEOUT.toNanos();
    synchronized (signal) {
      while (read >= events.size()) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw new AssertionError("no event within " + TIMEOUT + "; so far: " + summary());
        }
        try {
          signal.wait(TimeUnit.NANOSECONDS.toMillis(left) + 1);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new AssertionError(e);
        }
      }
      return events.get(read++);
    }
  }

  /** Reads the next event and checks it is {@code expected}. */
  public ProcessRecorder expect(Event expected) {
    assertThat(next()).isEqualTo(expected);
    return this;
  }

  /** Reads the exit with {@code code}, then the normal close that names it. */
  public ProcessRecorder expectExit(int code) {
    return expect(new Exit(code)).expect(new Closed(1000, "exit_code=" + code));
  }

  /** Reads the next event and checks it is a line {@code text}. */
  public ProcessRecorder expectLine(String text) {
    return expect(new Line(text));
  }

  /** Reads the next event, checks it is a {@code type}, and returns it. */
  public <T extends Event> T next(Class<T> type) {
    Event event = next();
    assertThat(event).isInstanceOf(type);
    return type.cast(event);
  }

  /**
   * Reads stdout events (and skips reconnects) until {@code count} bytes arrived; checks offsets.
   */
  public byte[] stdoutBytes(int count, long firstOffset) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    while (out.size() < count) {
      Event event = next();
      if (event instanceof Stdout s) {
        assertThat(s.offset()).as("offset of the next chunk").isEqualTo(firstOffset + out.size());
        out.writeBytes(s.bytes());
      } else if (!(event instanceof Reconnect)) {
        throw new AssertionError("expected stdout, got " + event);
      }
    }
    return out.toByteArray();
  }

  /** Every event so far, read or not. */
  public List<Event> events() {
    return List.copyOf(events);
  }

  /** The lines recorded so far. */
  public List<String> lines() {
    List<String> lines = new ArrayList<>();
    for (Event e : events) {
      if (e instanceof Line l) {
        lines.add(l.text());
      }
    }
    return lines;
  }

  /** How many events of {@code type} were recorded so far. */
  public long count(Class<? extends Event> type) {
    return events.stream().filter(type::isInstance).count();
  }

  /** The last event recorded, or null. */
  public @Nullable Event last() {
    return events.isEmpty() ? null : events.getLast();
  }

  /** Checks that every event was read. */
  public void expectNothingMore() {
    assertThat(events.subList(read, events.size())).as("unread events").isEmpty();
  }

  private String summary() {
    List<Event> all = events();
    List<Event> tail = all.subList(Math.max(0, all.size() - 10), all.size());
    return all.size() + " events, the last ones " + tail;
  }
}
