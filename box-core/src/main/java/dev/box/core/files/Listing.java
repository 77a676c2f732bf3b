package dev.box.core.files;

import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.BoxFileEntry;
import dev.box.api.BoxFileList;
import dev.box.api.BoxFileType;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/**
 * The records of {@link FileScripts#LIST} ({@code "<type> <size> <mode> <mtime> <depth> <name>\0"})
 * read into entries, at most a bound of them.
 *
 * @param entries the entries read
 * @param truncated whether more followed
 */
record Listing(List<BoxFileEntry> entries, boolean truncated) {
  private static final int MAX_RECORD_BYTES = 8192;

  static Listing read(InputStream stdout, String path, int maxEntries) throws IOException {
    List<BoxFileEntry> entries = new ArrayList<>();
    ByteArrayOutputStream record = new ByteArrayOutputStream();
    byte[] buffer = new byte[64 * 1024];
    int n;
    while ((n = stdout.read(buffer)) >= 0) {
      for (int i = 0; i < n; i++) {
        if (buffer[i] != 0) {
          if (record.size() >= MAX_RECORD_BYTES) {
            throw malformed(path);
          }
          record.write(buffer[i]);
          continue;
        }
        if (entries.size() == maxEntries) {
          return new Listing(entries, true);
        }
        entries.add(entry(record.toString(StandardCharsets.UTF_8), path));
        record.reset();
      }
    }
    return new Listing(entries, false);
  }

  BoxFileList toList() {
    return new BoxFileList(
        entries.stream().sorted(Comparator.comparing(BoxFileEntry::name)).toList(), truncated);
  }

  private static BoxFileEntry entry(String record, String path) {
    String[] fields = record.split(" ", 6);
    if (fields.length < 6) {
      throw malformed(path);
    }
    try {
      String name = fields[5];
      String entryPath;
      if (fields[4].equals("0")) {
        entryPath = path;
      } else {
        entryPath = path.equals("/") ? "/" + name : path + "/" + name;
      }
      return new BoxFileEntry(
          entryPath,
          name,
          type(fields[0]),
          Long.parseLong(fields[1]),
          String.format(Locale.ROOT, "%04o", Integer.parseInt(fields[2], 8)),
          mtime(fields[3]));
    } catch (NumberFormatException e) {
      throw malformed(path);
    }
  }

  private static BoxFileType type(String letter) {
    return switch (letter) {
      case "f" -> BoxFileType.FILE;
      case "d" -> BoxFileType.DIR;
      case "l" -> BoxFileType.SYMLINK;
      default -> BoxFileType.OTHER;
    };
  }

  /** {@code find}'s {@code %T@}: seconds since the epoch with a fraction. */
  private static Instant mtime(String text) {
    int dot = text.indexOf('.');
    long seconds = Long.parseLong(dot < 0 ? text : text.substring(0, dot));
    String fraction = dot < 0 ? "" : text.substring(dot + 1);
    String nanos = (fraction + "000000000").substring(0, 9);
    return Instant.ofEpochSecond(seconds, Long.parseLong(nanos));
  }

  private static BoxException malformed(String path) {
    return new BoxException(
        BoxErrorCode.INTERNAL_ERROR,
        "listing " + path + ": the sandbox answered a malformed entry");
  }
}
