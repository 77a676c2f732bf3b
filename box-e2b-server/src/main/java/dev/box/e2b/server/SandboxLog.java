package dev.box.e2b.server;

import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;

/**
 * What Box saw happen to one sandbox, for E2B's logs routes: its creation, the commands started in
 * it and their ends, pauses, resumes and new timeouts. Bounded: the last {@link #MAX_ENTRIES}
 * entries, each message at most {@link #MAX_MESSAGE_CHARS} characters. Kept in memory only, so a
 * restart of the server starts it empty. Thread-safe.
 */
final class SandboxLog {
  /** The most entries kept; older ones are dropped. */
  static final int MAX_ENTRIES = 1000;

  /** The longest message kept; a longer one (a long command line) is cut. */
  static final int MAX_MESSAGE_CHARS = 1024;

  /** E2B's log levels, lowest first. */
  enum Level {
    DEBUG,
    INFO,
    WARN,
    ERROR;

    /** Its name on the wire. */
    String wireName() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  /**
   * One entry.
   *
   * @param at when it happened
   * @param level how much it matters
   * @param message what happened
   * @param fields its details by name ({@code pid}, {@code exitCode}, ...)
   */
  record Entry(Instant at, Level level, String message, Map<String, String> fields) {
    /** Cuts the message and copies the fields. */
    Entry {
      message =
          message.length() > MAX_MESSAGE_CHARS ? message.substring(0, MAX_MESSAGE_CHARS) : message;
      fields = Map.copyOf(fields);
    }
  }

  private final Deque<Entry> entries = new ArrayDeque<>();

  /** Adds {@code entry}, dropping the oldest beyond {@link #MAX_ENTRIES}. */
  synchronized void add(Entry entry) {
    entries.addLast(entry);
    if (entries.size() > MAX_ENTRIES) {
      entries.removeFirst();
    }
  }

  /** Adds an {@code info} entry with no fields. */
  void info(Instant at, String message) {
    add(new Entry(at, Level.INFO, message, Map.of()));
  }

  /** Adds the start of process {@code pid}, with its command line. */
  void started(Instant at, int pid, ProcessConfig config) {
    StringBuilder line = new StringBuilder(config.cmd());
    config.args().forEach(arg -> line.append(' ').append(arg));
    add(
        new Entry(
            at,
            Level.INFO,
            "process " + pid + " started: " + line,
            Map.of("pid", Integer.toString(pid), "cwd", config.cwd())));
  }

  /**
   * Adds the end of {@code process}: {@code info} when it exited by itself, {@code warn} when it
   * was killed (by a signal, or at its deadline).
   */
  void ended(Instant at, E2bProcess process) {
    String killedBy = process.killedBy();
    int code = process.exitCode();
    add(
        new Entry(
            at,
            killedBy == null ? Level.INFO : Level.WARN,
            "process "
                + process.pid()
                + " ended: "
                + (killedBy == null ? "exit code " + code : killedBy + ", exit code " + code),
            Map.of("pid", Integer.toString(process.pid()), "exitCode", Integer.toString(code))));
  }

  /** The entries kept, oldest first. */
  synchronized List<Entry> entries() {
    return List.copyOf(entries);
  }
}
