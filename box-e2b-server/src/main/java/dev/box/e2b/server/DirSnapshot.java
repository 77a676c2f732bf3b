package dev.box.e2b.server;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * One snapshot of a watched directory as {@code watch.sh} prints it, and the events that lead from
 * one snapshot to the next, in envd's terms: a new name is {@code CREATE} (then {@code WRITE} when
 * the new file holds bytes, as inotify tells a file created and written), a file whose size or
 * modification time changed is {@code WRITE}, an entry whose mode alone changed is {@code CHMOD}, a
 * name gone is {@code REMOVE}, or {@code RENAME} when its inode reappears under a new name (which
 * is {@code CREATE}), as fsnotify tells a move. A directory's own size and time are not compared:
 * they change with its entries, which have their own events.
 *
 * @param entries the entries by their path relative to the watched directory
 */
record DirSnapshot(SortedMap<String, Entry> entries) {
  /** The longest record read: a path of {@code PATH_MAX} and the fields before it. */
  static final int MAX_RECORD_BYTES = 4096 + 128;

  /** Copies the map. */
  DirSnapshot {
    entries = new TreeMap<>(entries);
  }

  /** One entry: find's type letter, inode, size, modification time and permission bits. */
  record Entry(String type, String inode, String size, String mtime, String mode) {}

  /** A change, as envd's {@code FilesystemEvent}. */
  record Event(String name, String type) {}

  /** The sandbox printed more than a watch takes. */
  static final class TooLarge extends IOException {
    private static final long serialVersionUID = 1L;

    TooLarge(String message) {
      super(message);
    }
  }

  /**
   * The next snapshot in {@code in}, or null at its end.
   *
   * @throws TooLarge beyond {@code maxEntries} entries or {@link #MAX_RECORD_BYTES} in a record
   * @throws IOException for a record that is not {@code watch.sh}'s
   */
  static @Nullable DirSnapshot read(InputStream in, int maxEntries) throws IOException {
    SortedMap<String, Entry> entries = new TreeMap<>();
    while (true) {
      String record = record(in);
      if (record == null) {
        return null;
      }
      if (record.isEmpty()) {
        return new DirSnapshot(entries);
      }
      if (entries.size() >= maxEntries) {
        throw new TooLarge("the directory holds more than " + maxEntries + " entries to watch");
      }
      String[] fields = record.split("/", 6);
      if (fields.length < 6 || fields[5].isEmpty()) {
        throw new IOException("not a watch record: " + record);
      }
      entries.put(fields[5], new Entry(fields[0], fields[1], fields[2], fields[3], fields[4]));
    }
  }

  /** The next NUL-terminated record, or null at the end of {@code in}. */
  private static @Nullable String record(InputStream in) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    int b;
    while ((b = in.read()) > 0) {
      if (bytes.size() >= MAX_RECORD_BYTES) {
        throw new TooLarge("a watch record is longer than " + MAX_RECORD_BYTES + " bytes");
      }
      bytes.write(b);
    }
    if (b < 0) {
      return null;
    }
    return bytes.toString(StandardCharsets.UTF_8);
  }

  /** The events that lead from this snapshot to {@code next}, in the order of their names. */
  List<Event> changesTo(DirSnapshot next) {
    Map<String, String> gone = new HashMap<>();
    entries.forEach(
        (name, entry) -> {
          if (!next.entries.containsKey(name)) {
            gone.put(entry.type() + entry.inode(), name);
          }
        });
    List<Event> events = new ArrayList<>();
    SortedMap<String, String> renamed = new TreeMap<>();
    next.entries.forEach(
        (name, now) -> {
          Entry was = entries.get(name);
          if (was == null) {
            String from = gone.remove(now.type() + now.inode());
            if (from != null) {
              renamed.put(from, name);
            }
            events.add(new Event(name, "EVENT_TYPE_CREATE"));
            if (now.type().equals("f") && !now.size().equals("0")) {
              events.add(new Event(name, "EVENT_TYPE_WRITE"));
            }
          } else if (!was.type().equals(now.type())) {
            events.add(new Event(name, "EVENT_TYPE_REMOVE"));
            events.add(new Event(name, "EVENT_TYPE_CREATE"));
          } else if (!now.type().equals("d")
              && (!was.size().equals(now.size()) || !was.mtime().equals(now.mtime()))) {
            events.add(new Event(name, "EVENT_TYPE_WRITE"));
          } else if (!was.mode().equals(now.mode())) {
            events.add(new Event(name, "EVENT_TYPE_CHMOD"));
          }
        });
    List<Event> departures = new ArrayList<>();
    renamed.keySet().forEach(from -> departures.add(new Event(from, "EVENT_TYPE_RENAME")));
    gone.values().stream()
        .sorted()
        .forEach(name -> departures.add(new Event(name, "EVENT_TYPE_REMOVE")));
    departures.addAll(events);
    return departures;
  }
}
