package dev.box.core.files;

import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.BoxValidationException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashSet;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Reads a tar archive header by header and copies it, unchanged, only while every entry stays in
 * the directory it will be extracted into: ustar, GNU long names ({@code L}, {@code K}) and pax
 * extended headers ({@code x} path, linkpath and size; {@code g} without path or linkpath).
 *
 * <p>Refused (400): a name that is absolute or has a {@code ..} component; a symbolic link whose
 * target is absolute or leads out of the tree from the link's directory; a hard link whose target
 * is not a name of the tree; a name or link target that goes through a symbolic link of the same
 * archive; character and block devices, FIFOs and every other type but regular files, directories
 * and links; a header whose checksum is wrong. Refused with 413: more than {@code maxBytes} bytes
 * or more than {@code maxEntries} entries. What follows the end-of-archive blocks is read (and
 * counted) but not copied, as tar would ignore it.
 */
final class TarGuard {
  private static final int BLOCK = 512;

  /** The most bytes of a GNU long name or a pax header: names are at most PATH_MAX anyway. */
  private static final int MAX_META_BYTES = 64 * 1024;

  /** What the archive held. */
  record Summary(int entries, long bytes) {}

  private final Counted in;
  private final OutputStream out;
  private final int maxEntries;
  private final Set<String> symlinks = new HashSet<>();
  private int entries;
  private @Nullable String longName;
  private @Nullable String longLink;
  private @Nullable String paxPath;
  private @Nullable String paxLink;
  private long paxSize = -1;

  private TarGuard(InputStream in, OutputStream out, long maxBytes, int maxEntries) {
    this.in = new Counted(in, maxBytes);
    this.out = out;
    this.maxEntries = maxEntries;
  }

  /**
   * Copies the archive {@code in} to {@code out} once each header is checked; see the class
   * comment.
   *
   * @throws BoxValidationException for an entry that is refused or a stream that is not a tar
   * @throws BoxException {@code payload_too_large} beyond the bounds
   * @throws IOException when reading or writing fails
   */
  static Summary copy(InputStream in, OutputStream out, long maxBytes, int maxEntries)
      throws IOException {
    TarGuard guard = new TarGuard(in, out, maxBytes, maxEntries);
    guard.run();
    return new Summary(guard.entries, guard.in.count);
  }

  private void run() throws IOException {
    byte[] header = new byte[BLOCK];
    while (true) {
      if (!in.readBlock(header)) {
        throw new BoxValidationException("the archive ends without its end-of-archive blocks");
      }
      if (allZero(header)) {
        out.write(header);
        in.drain();
        // A second zero block ends the archive: tar reads no further.
        out.write(new byte[BLOCK]);
        return;
      }
      checkChecksum(header);
      entry(header);
    }
  }

  private void entry(byte[] header) throws IOException {
    char type = (char) (header[156] & 0xff);
    long size = paxSize >= 0 && !isMeta(type) ? paxSize : number(header, 124, 12);
    switch (type) {
      case 'L' -> longName = meta(header, size);
      case 'K' -> longLink = meta(header, size);
      case 'x' -> pax(meta(header, size), false);
      case 'g' -> pax(meta(header, size), true);
      case '0', '\0', '7', '5', '2', '1' -> member(header, type, size);
      case '3', '4' -> throw refused(name(header), "is a device node");
      case '6' -> throw refused(name(header), "is a FIFO");
      default -> throw refused(name(header), "has the unsupported type '" + type + "'");
    }
  }

  private static boolean isMeta(char type) {
    return type == 'L' || type == 'K' || type == 'x' || type == 'g';
  }

  private void member(byte[] header, char type, long size) throws IOException {
    if (++entries > maxEntries) {
      throw new BoxException(
          BoxErrorCode.PAYLOAD_TOO_LARGE,
          "the archive holds more than max_archive_entries (" + maxEntries + ") entries");
    }
    String name = name(header);
    String member = memberPath(name, name);
    if (member.isEmpty() && type != '5') {
      throw refused(name, "would replace the directory itself");
    }
    if (type == '2') {
      symlinkTarget(name, member, link(header));
      symlinks.add(member);
    } else if (type == '1') {
      memberPath(name, link(header));
    }
    longName = null;
    longLink = null;
    paxPath = null;
    paxLink = null;
    paxSize = -1;
    out.write(header);
    // Links and directories carry no data whatever their size field says.
    in.copy(type == '2' || type == '1' || type == '5' ? 0 : size, out);
  }

  /** The name of the entry {@code header} starts. */
  private String name(byte[] header) {
    if (longName != null) {
      return longName;
    }
    if (paxPath != null) {
      return paxPath;
    }
    String name = text(header, 0, 100);
    String prefix = ustar(header) ? text(header, 345, 155) : "";
    return prefix.isEmpty() ? name : prefix + "/" + name;
  }

  private String link(byte[] header) {
    if (longLink != null) {
      return longLink;
    }
    return paxLink != null ? paxLink : text(header, 157, 100);
  }

  /**
   * {@code path} as a path relative to the tree ("" for its root): refused when absolute, with a
   * {@code ..} component, or through a symbolic link of this archive.
   */
  private String memberPath(String entry, String path) {
    if (path.startsWith("/")) {
      throw refused(entry, "has the absolute path '" + path + "'");
    }
    Deque<String> parts = new ArrayDeque<>();
    for (String part : path.split("/", -1)) {
      if (part.equals("..")) {
        throw refused(entry, "leads out of the directory with '..' in '" + path + "'");
      }
      if (!part.isEmpty() && !part.equals(".")) {
        throwIfSymlink(entry, parts);
        parts.addLast(part);
      }
    }
    return String.join("/", parts);
  }

  /** Checks the target of the symbolic link {@code member}; see the class comment. */
  private void symlinkTarget(String entry, String member, String target) {
    if (target.isEmpty() || target.startsWith("/")) {
      throw refused(entry, "is a symbolic link to the absolute path '" + target + "'");
    }
    Deque<String> parts = new ArrayDeque<>();
    int slash = member.lastIndexOf('/');
    if (slash > 0) {
      for (String part : member.substring(0, slash).split("/")) {
        parts.addLast(part);
      }
    }
    for (String part : target.split("/", -1)) {
      if (part.isEmpty() || part.equals(".")) {
        continue;
      }
      throwIfSymlink(entry, parts);
      if (part.equals("..")) {
        if (parts.isEmpty()) {
          throw refused(entry, "is a symbolic link out of the directory, to '" + target + "'");
        }
        parts.removeLast();
      } else {
        parts.addLast(part);
      }
    }
  }

  private void throwIfSymlink(String entry, Deque<String> parts) {
    if (!parts.isEmpty() && symlinks.contains(String.join("/", parts))) {
      throw refused(
          entry, "goes through '" + String.join("/", parts) + "', a symbolic link of the archive");
    }
  }

  private String meta(byte[] header, long size) throws IOException {
    if (size > MAX_META_BYTES) {
      throw new BoxValidationException(
          "the archive has an extended header of " + size + " bytes, more than " + MAX_META_BYTES);
    }
    out.write(header);
    byte[] data = in.copyAndKeep((int) size, out);
    int end = data.length;
    while (end > 0 && data[end - 1] == 0) {
      end--;
    }
    return new String(data, 0, end, StandardCharsets.UTF_8);
  }

  /** Reads pax records ({@code "<length> <key>=<value>\n"}). */
  private void pax(String records, boolean global) {
    byte[] bytes = records.getBytes(StandardCharsets.UTF_8);
    int at = 0;
    while (at < bytes.length) {
      int space = indexOf(bytes, (byte) ' ', at);
      int length;
      try {
        length = Integer.parseInt(new String(bytes, at, space - at, StandardCharsets.US_ASCII));
      } catch (NumberFormatException | IndexOutOfBoundsException e) {
        throw new BoxValidationException("the archive has a malformed pax header");
      }
      if (space < 0 || length <= space - at + 1 || at + length > bytes.length) {
        throw new BoxValidationException("the archive has a malformed pax header");
      }
      String record = new String(bytes, space + 1, at + length - space - 2, StandardCharsets.UTF_8);
      int equals = record.indexOf('=');
      if (equals < 0) {
        throw new BoxValidationException("the archive has a malformed pax header");
      }
      String key = record.substring(0, equals);
      String value = record.substring(equals + 1);
      if (global && (key.equals("path") || key.equals("linkpath") || key.equals("size"))) {
        throw new BoxValidationException(
            "the archive has a global pax header that sets '" + key + "'");
      }
      switch (key) {
        case "path" -> paxPath = value;
        case "linkpath" -> paxLink = value;
        case "size" -> paxSize = paxNumber(value);
        default -> {}
      }
      at += length;
    }
  }

  private static long paxNumber(String value) {
    try {
      long n = Long.parseLong(value);
      if (n >= 0) {
        return n;
      }
    } catch (NumberFormatException e) {
      // refused below
    }
    throw new BoxValidationException("the archive has a pax size that is not a size: " + value);
  }

  private static int indexOf(byte[] bytes, byte b, int from) {
    for (int i = from; i < bytes.length; i++) {
      if (bytes[i] == b) {
        return i;
      }
    }
    return -1;
  }

  private static void checkChecksum(byte[] header) {
    long sum = 0;
    for (int i = 0; i < BLOCK; i++) {
      sum += (i >= 148 && i < 156) ? ' ' : (header[i] & 0xff);
    }
    if (number(header, 148, 8) != sum) {
      throw new BoxValidationException("not a tar archive: a header's checksum is wrong");
    }
  }

  /** An octal field, or a GNU base-256 one (first byte's high bit set). */
  private static long number(byte[] header, int offset, int length) {
    if ((header[offset] & 0x80) != 0) {
      long value = header[offset] & 0x7f;
      for (int i = 1; i < length; i++) {
        if (value > (Long.MAX_VALUE >> 8)) {
          throw new BoxValidationException("not a tar archive: a number field is out of range");
        }
        value = (value << 8) | (header[offset + i] & 0xff);
      }
      return value;
    }
    int i = offset;
    int end = offset + length;
    while (i < end && header[i] == ' ') {
      i++;
    }
    long value = 0;
    for (; i < end && header[i] != 0 && header[i] != ' '; i++) {
      int c = header[i] & 0xff;
      if (c < '0' || c > '7' || value > (Long.MAX_VALUE >> 3)) {
        throw new BoxValidationException("not a tar archive: a number field is not octal");
      }
      value = (value << 3) | (c - '0');
    }
    return value;
  }

  private static boolean ustar(byte[] header) {
    return header[257] == 'u'
        && header[258] == 's'
        && header[259] == 't'
        && header[260] == 'a'
        && header[261] == 'r';
  }

  private static String text(byte[] header, int offset, int length) {
    int end = offset;
    while (end < offset + length && header[end] != 0) {
      end++;
    }
    return new String(header, offset, end - offset, StandardCharsets.UTF_8);
  }

  private static boolean allZero(byte[] block) {
    for (byte b : block) {
      if (b != 0) {
        return false;
      }
    }
    return true;
  }

  private static BoxValidationException refused(String entry, String why) {
    return new BoxValidationException("archive entry '" + entry + "' " + why + ": refused");
  }

  /** The input, counted, with a bound. */
  private static final class Counted {
    private final InputStream in;
    private final long max;
    private final byte[] buffer = new byte[64 * 1024];
    long count;

    Counted(InputStream in, long max) {
      this.in = in;
      this.max = max;
    }

    /** Reads one block; false at the end of the stream before any of it. */
    boolean readBlock(byte[] block) throws IOException {
      int n = in.readNBytes(block, 0, BLOCK);
      add(n);
      if (n == 0) {
        return false;
      }
      if (n < BLOCK) {
        throw new BoxValidationException("the archive ends in the middle of a block");
      }
      return true;
    }

    /** Copies {@code size} bytes of data and the padding to the next block. */
    void copy(long size, OutputStream out) throws IOException {
      long left = padded(size);
      if (left > max - count) {
        throw tooLarge();
      }
      while (left > 0) {
        int n = in.read(buffer, 0, (int) Math.min(buffer.length, left));
        if (n < 0) {
          throw new BoxValidationException("the archive ends in the middle of an entry");
        }
        add(n);
        out.write(buffer, 0, n);
        left -= n;
      }
    }

    byte[] copyAndKeep(int size, OutputStream out) throws IOException {
      byte[] data = new byte[(int) padded(size)];
      int n = in.readNBytes(data, 0, data.length);
      add(n);
      if (n < data.length) {
        throw new BoxValidationException("the archive ends in the middle of an entry");
      }
      out.write(data);
      return java.util.Arrays.copyOf(data, size);
    }

    /** Reads what follows the end of the archive, within the bound. */
    void drain() throws IOException {
      int n;
      while ((n = in.read(buffer)) >= 0) {
        add(n);
      }
    }

    private void add(int n) {
      count += Math.max(0, n);
      if (count > max) {
        throw tooLarge();
      }
    }

    private BoxException tooLarge() {
      return new BoxException(
          BoxErrorCode.PAYLOAD_TOO_LARGE,
          "the archive is larger than max_archive_bytes (" + max + " bytes)");
    }

    private static long padded(long size) {
      return (size + BLOCK - 1) / BLOCK * BLOCK;
    }
  }
}
