package dev.box.testclient;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Tar archives built in memory, entry by entry, for a test to upload: ustar headers written as
 * given, so that a test can put absolute names, climbing paths, links out and device nodes in. Also
 * reads the names and contents of an archive a server answered.
 */
public final class TarBytes {
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();

  /** An empty archive to add entries to. */
  public static TarBytes builder() {
    return new TarBytes();
  }

  /** Adds a regular file holding {@code data}. */
  public TarBytes file(String name, byte[] data) {
    header(name, '0', data.length, "", 0644);
    out.writeBytes(data);
    pad(data.length);
    return this;
  }

  /** Adds a regular file holding {@code text} in UTF-8. */
  public TarBytes file(String name, String text) {
    return file(name, text.getBytes(StandardCharsets.UTF_8));
  }

  /** Adds a directory. */
  public TarBytes dir(String name) {
    header(name, '5', 0, "", 0755);
    return this;
  }

  /** Adds a symbolic link {@code name} to {@code target}. */
  public TarBytes symlink(String name, String target) {
    header(name, '2', 0, target, 0777);
    return this;
  }

  /** Adds a hard link {@code name} to {@code target}. */
  public TarBytes hardlink(String name, String target) {
    header(name, '1', 0, target, 0644);
    return this;
  }

  /**
   * Adds an entry of the raw type {@code type} ({@code '3'} a character device, {@code '6'} a
   * FIFO).
   */
  public TarBytes special(String name, char type) {
    header(name, type, 0, "", 0644);
    return this;
  }

  /** The archive, ended by its two zero blocks. */
  public byte[] build() {
    ByteArrayOutputStream copy = new ByteArrayOutputStream();
    copy.writeBytes(out.toByteArray());
    copy.writeBytes(new byte[1024]);
    return copy.toByteArray();
  }

  /**
   * The entries of {@code tar}: name to content for regular files, name to {@code "->target"} for
   * symbolic links, name to {@code "/"} for directories; ustar and GNU long names.
   */
  public static Map<String, String> entries(byte[] tar) throws IOException {
    Map<String, String> entries = new LinkedHashMap<>();
    InputStream in = new java.io.ByteArrayInputStream(tar);
    String longName = null;
    while (true) {
      byte[] header = in.readNBytes(512);
      if (header.length < 512 || header[0] == 0) {
        return entries;
      }
      long size =
          Long.parseLong(
              text(header, 124, 12).strip().isEmpty() ? "0" : text(header, 124, 12).strip(), 8);
      byte[] data = in.readNBytes((int) size);
      in.skipNBytes((512 - size % 512) % 512);
      char type = (char) header[156];
      String prefix = text(header, 345, 155);
      String name =
          longName != null
              ? longName
              : (prefix.isEmpty() ? "" : prefix + "/") + text(header, 0, 100);
      longName = null;
      switch (type) {
        case 'L' -> longName = new String(data, StandardCharsets.UTF_8).replace("\0", "");
        case '5' -> entries.put(name, "/");
        case '2' -> entries.put(name, "->" + text(header, 157, 100));
        default -> entries.put(name, new String(data, StandardCharsets.ISO_8859_1));
      }
    }
  }

  private void header(String name, char type, long size, String link, int mode) {
    byte[] h = new byte[512];
    put(h, 0, 100, name);
    put(h, 100, 8, String.format("%07o", mode));
    put(h, 108, 8, "0001750");
    put(h, 116, 8, "0001750");
    put(h, 124, 12, String.format("%011o", size));
    put(h, 136, 12, String.format("%011o", 1_700_000_000L));
    h[156] = (byte) type;
    put(h, 157, 100, link);
    put(h, 257, 6, "ustar");
    put(h, 263, 2, "00");
    for (int i = 148; i < 156; i++) {
      h[i] = ' ';
    }
    long sum = 0;
    for (byte b : h) {
      sum += b & 0xff;
    }
    put(h, 148, 8, String.format("%06o", sum) + "\0 ");
    out.writeBytes(h);
  }

  private void pad(long size) {
    out.writeBytes(new byte[(int) ((512 - size % 512) % 512)]);
  }

  private static void put(byte[] h, int offset, int length, String value) {
    byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
    if (bytes.length > length) {
      throw new IllegalArgumentException("'" + value + "' does not fit in " + length + " bytes");
    }
    System.arraycopy(bytes, 0, h, offset, bytes.length);
  }

  private static String text(byte[] h, int offset, int length) {
    int end = offset;
    while (end < offset + length && h[end] != 0) {
      end++;
    }
    return new String(h, offset, end - offset, StandardCharsets.UTF_8);
  }

  /** Every entry's name, in order. */
  public static List<String> names(byte[] tar) throws IOException {
    return new ArrayList<>(entries(tar).keySet());
  }
}
