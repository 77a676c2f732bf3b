package dev.box.e2b.server;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntFunction;
import org.jspecify.annotations.Nullable;

/**
 * The running processes of one sandbox's process service, by pid (a counter of the sandbox's own,
 * from 1) and by tag, and the bounds on them: at most {@link #MAX_PROCESSES} processes and {@link
 * #MAX_WATCHERS} streams watching them at once, {@code resource_exhausted} beyond. Thread-safe.
 */
final class ProcessTable {
  /** The most processes of one sandbox running at once. */
  static final int MAX_PROCESSES = 64;

  /** The most streams watching the processes of one sandbox at once. */
  static final int MAX_WATCHERS = 64;

  private final Map<Integer, E2bProcess> running = new ConcurrentHashMap<>();
  private int lastPid;
  private int starting;
  private int watching;

  /**
   * Starts a process with the next pid: {@code starter} spawns it (and must not call back here).
   *
   * @throws ConnectError {@code resource_exhausted} when {@link #MAX_PROCESSES} run already
   */
  E2bProcess start(IntFunction<E2bProcess> starter) {
    int pid;
    synchronized (this) {
      if (running.size() + starting >= MAX_PROCESSES) {
        throw new ConnectError(
            "resource_exhausted",
            "the sandbox runs " + MAX_PROCESSES + " processes already, the most Box allows");
      }
      starting++;
      pid = ++lastPid;
    }
    try {
      E2bProcess process = starter.apply(pid);
      running.put(pid, process);
      if (process.ended()) {
        // It ended before it was listed: its end found nothing to remove.
        running.remove(pid, process);
      }
      return process;
    } finally {
      synchronized (this) {
        starting--;
      }
    }
  }

  /** Forgets {@code process}, which ended. */
  void remove(E2bProcess process) {
    running.remove(process.pid(), process);
  }

  /** The running processes, by pid. */
  List<E2bProcess> list() {
    return running.values().stream().sorted(Comparator.comparingInt(E2bProcess::pid)).toList();
  }

  /**
   * The running process a request's {@code process} selector names: {@code {"pid":N}} or {@code
   * {"tag":"..."}}.
   *
   * @throws ConnectError {@code not_found} when none runs, {@code invalid_argument} for a bad
   *     selector
   */
  E2bProcess find(JsonNode request) {
    JsonNode selector = request.path("process");
    JsonNode pid = selector.path("pid");
    JsonNode tag = selector.path("tag");
    E2bProcess found;
    String name;
    if (pid.isIntegralNumber() || pid.isTextual() && pid.asText().matches("[0-9]{1,10}")) {
      long number = pid.asLong();
      name = "pid " + number;
      found = number > Integer.MAX_VALUE ? null : running.get((int) number);
    } else if (tag.isTextual()) {
      name = "tag '" + tag.asText() + "'";
      found = byTag(tag.asText());
    } else {
      throw ConnectError.invalidArgument("process must name a pid or a tag");
    }
    if (found == null) {
      throw ConnectError.notFound("no running process with " + name);
    }
    return found;
  }

  private @Nullable E2bProcess byTag(String tag) {
    return running.values().stream()
        .filter(p -> tag.equals(p.config().tag()))
        .findFirst()
        .orElse(null);
  }

  /**
   * Counts one more watching stream.
   *
   * @throws ConnectError {@code resource_exhausted} beyond {@link #MAX_WATCHERS}
   */
  synchronized void watching() {
    if (watching >= MAX_WATCHERS) {
      throw new ConnectError(
          "resource_exhausted",
          "the sandbox's processes have " + MAX_WATCHERS + " streams already, the most Box allows");
    }
    watching++;
  }

  /** Counts one watching stream less. */
  synchronized void unwatched() {
    watching--;
  }
}
