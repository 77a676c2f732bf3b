package dev.box.backend.microvm;

import dev.box.api.BoxValidationException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * Unpacks the tar of an image's flat file system (what the engine exports) into an empty directory,
 * as root, keeping owners and modes, and treating the archive as hostile: ustar headers with GNU
 * long names ({@code L}, {@code K}) and pax extended headers ({@code x}: path, linkpath, size, uid,
 * gid, mtime; {@code g} ignored).
 *
 * <p>Refused ({@link BoxValidationException}): a name that is absolute or has a {@code ..}
 * component; a member whose path goes through a symbolic link (of the archive: nothing is ever
 * followed); a hard link whose target is not a regular file of the tree reached the same way; a
 * type other than regular files, directories, symbolic and hard links, devices and FIFOs (those two
 * are skipped: the guest's /dev is a devtmpfs); a header whose checksum is wrong; more than {@code
 * maxBytes} of archive or {@code maxEntries} members. A symbolic link's target is stored as it is:
 * it is resolved in the guest, never on the host. Extended attributes are not kept.
 */
final class RootTar {
  private static final int BLOCK = 512;

  /** The most bytes of a GNU long name or a pax header. */
  private static final int MAX_META_BYTES = 64 * 1024;

  /** What was unpacked: the members and the bytes their contents take in blocks of 4 KiB. */
  record Summary(long entries, long blockBytes) {}

  private final InputStream in;
  private final Path root;
  private final long maxBytes;
  private final long maxEntries;
  private final Set<Path> directories = new HashSet<>();
  private long read;
  private long entries;
  private long blockBytes;
  private @Nullable String longName;
  private @Nullable String longLink;
  private final Header pax = new Header();

  private RootTar(InputStream in, Path root, long maxBytes, long maxEntries) {
    this.in = in;
    this.root = root;
    this.maxBytes = maxBytes;
    this.maxEntries = maxEntries;
  }

  /**
   * Unpacks {@code in} into {@code root}, an empty directory of root's; see the class comment.
   *
   * @throws BoxValidationException for a member that is refused or a stream that is not a tar
   * @throws IOException when reading or writing fails
   */
  static Summary unpack(InputStream in, Path root, long maxBytes, long maxEntries)
      throws IOException {
    RootTar tar = new RootTar(in, root, maxBytes, maxEntries);
    tar.directories.add(root);
    tar.run();
    return new Summary(tar.entries, tar.blockBytes);
  }

  /** The fields of a header that a pax header or a GNU long name may override. */
  private static final class Header {
    @Nullable String path;
    @Nullable String link;
    long size = -1;
    long uid = -1;
    long gid = -1;
    long mtime = -1;

    void clear() {
      path = null;
      link = null;
      size = uid = gid = mtime = -1;
    }
  }

  private void run() throws IOException {
    byte[] header = new byte[BLOCK];
    while (true) {
      if (!readBlock(header)) {
        // Some writers end the archive at the end of the stream, without zero blocks.
        return;
      }
      if (allZero(header)) {
        return;
      }
      checkSum(header);
      member(header);
    }
  }

  private void member(byte[] header) throws IOException {
    char type = (char) header[156];
    long size = pax.size >= 0 && type != 'x' && type != 'g' ? pax.size : number(header, 124, 12);
    switch (type) {
      case 'x' -> {
        readPax(meta(size));
        return;
      }
      case 'g' -> {
        meta(size);
        return;
      }
      case 'L' -> {
        longName = cString(meta(size));
        return;
      }
      case 'K' -> {
        longLink = cString(meta(size));
        return;
      }
      default -> {}
    }
    if (++entries > maxEntries) {
      throw new BoxValidationException("the image has more than " + maxEntries + " files");
    }
    String name = pax.path != null ? pax.path : longName != null ? longName : ustarName(header);
    String link =
        pax.link != null ? pax.link : longLink != null ? longLink : text(header, 157, 100);
    long uid = pax.uid >= 0 ? pax.uid : number(header, 108, 8);
    long gid = pax.gid >= 0 ? pax.gid : number(header, 116, 8);
    long mtime = pax.mtime >= 0 ? pax.mtime : number(header, 136, 12);
    int mode = (int) (number(header, 100, 8) & 07777);
    pax.clear();
    longName = null;
    longLink = null;
    Path path = inside(name);
    switch (type) {
      case '0', '\0', '7' -> file(path, size, mtime);
      case '5' -> directory(path);
      case '2' -> symlink(path, link);
      case '1' -> hardLink(path, inside(link), name);
      case '3', '4', '6' -> {
        skip(size + padding(size));
        return;
      }
      default ->
          throw new BoxValidationException(
              "the image's member " + shown(name) + " has an unsupported type '" + type + "'");
    }
    if (type != '1') {
      owner(path, uid, gid, mode, type == '2');
    }
    if (type == '1' || type == '2' || type == '5') {
      // A link or directory has no contents; whatever a header claims is passed over.
      skip(size + padding(size));
    }
  }

  /**
   * The path of {@code name} in the tree, with the directories above it (made when missing, as
   * root's 0755); refused when absolute, with a {@code ..} component, or through a symbolic link.
   */
  private Path inside(String name) throws IOException {
    String relative = name;
    while (relative.startsWith("./")) {
      relative = relative.substring(2);
    }
    if (relative.startsWith("/") || relative.indexOf('\0') >= 0) {
      throw new BoxValidationException("the image's member " + shown(name) + " is absolute");
    }
    Path path = root;
    String[] parts = relative.split("/");
    for (int i = 0; i < parts.length; i++) {
      String part = parts[i];
      if (part.equals("..")) {
        throw new BoxValidationException(
            "the image's member " + shown(name) + " leads out of its file system");
      }
      if (part.isEmpty() || part.equals(".")) {
        continue;
      }
      path = path.resolve(part);
      if (i < parts.length - 1) {
        parent(path, name);
      }
    }
    return path;
  }

  /** Makes sure {@code dir}, above a member, is a directory of the tree and not a link. */
  private void parent(Path dir, String name) throws IOException {
    if (directories.contains(dir)) {
      return;
    }
    BasicFileAttributes attributes = attributes(dir);
    if (attributes == null) {
      Files.createDirectory(dir);
    } else if (!attributes.isDirectory()) {
      throw new BoxValidationException(
          "the image's member "
              + shown(name)
              + " goes through "
              + (attributes.isSymbolicLink() ? "a symbolic link" : "a file")
              + ": "
              + shown(root.relativize(dir).toString()));
    }
    directories.add(dir);
  }

  private void file(Path path, long size, long mtime) throws IOException {
    replace(path);
    try (OutputStream out =
        Files.newOutputStream(
            path,
            StandardOpenOption.CREATE_NEW,
            StandardOpenOption.WRITE,
            LinkOption.NOFOLLOW_LINKS)) {
      copy(out, size);
    }
    blockBytes += (size + 4095) / 4096 * 4096;
    if (mtime >= 0) {
      Files.setLastModifiedTime(path, FileTime.from(mtime, TimeUnit.SECONDS));
    }
  }

  private void directory(Path path) throws IOException {
    if (path.equals(root)) {
      return;
    }
    BasicFileAttributes attributes = attributes(path);
    if (attributes == null || !attributes.isDirectory()) {
      replace(path);
      Files.createDirectory(path);
    }
    directories.add(path);
    blockBytes += 4096;
  }

  private void symlink(Path path, String target) throws IOException {
    if (path.equals(root) || target.isEmpty() || target.indexOf('\0') >= 0) {
      throw new BoxValidationException(
          "the image's symbolic link " + shown(path.toString()) + " is invalid");
    }
    replace(path);
    Files.createSymbolicLink(path, Path.of(target));
    directories.remove(path);
  }

  private void hardLink(Path path, Path target, String name) throws IOException {
    BasicFileAttributes attributes = attributes(target);
    if (attributes == null || !attributes.isRegularFile()) {
      throw new BoxValidationException(
          "the image's hard link " + shown(name) + " names no file of the image");
    }
    replace(path);
    Files.createLink(path, target);
  }

  /**
   * Removes what an earlier member of the same name left (a later member wins, as tar does); a
   * directory only when empty.
   */
  private void replace(Path path) throws IOException {
    if (path.equals(root)) {
      throw new BoxValidationException("the image's file system root is not a directory");
    }
    BasicFileAttributes attributes = attributes(path);
    if (attributes != null) {
      Files.delete(path);
      directories.remove(path);
    }
  }

  /** The owner and mode of a member, set without following a link (a link keeps its mode). */
  private static void owner(Path path, long uid, long gid, int mode, boolean link)
      throws IOException {
    Files.setAttribute(path, "unix:uid", (int) uid, LinkOption.NOFOLLOW_LINKS);
    Files.setAttribute(path, "unix:gid", (int) gid, LinkOption.NOFOLLOW_LINKS);
    if (!link) {
      // After the owner: a change of owner clears the set-id bits.
      Files.setAttribute(path, "unix:mode", mode, LinkOption.NOFOLLOW_LINKS);
    }
  }

  private static @Nullable BasicFileAttributes attributes(Path path) throws IOException {
    try {
      return Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
    } catch (NoSuchFileException e) {
      return null;
    }
  }

  private void readPax(byte[] records) throws IOException {
    int at = 0;
    while (at < records.length) {
      int space = indexOf(records, (byte) ' ', at);
      int length;
      try {
        length =
            space < 0
                ? -1
                : Integer.parseInt(new String(records, at, space - at, StandardCharsets.US_ASCII));
      } catch (NumberFormatException e) {
        length = -1;
      }
      if (length <= space - at + 1
          || at + length > records.length
          || records[at + length - 1] != '\n') {
        throw new BoxValidationException("the image has a malformed pax header");
      }
      String record =
          new String(records, space + 1, at + length - space - 2, StandardCharsets.UTF_8);
      int equals = record.indexOf('=');
      if (equals > 0) {
        paxValue(record.substring(0, equals), record.substring(equals + 1));
      }
      at += length;
    }
  }

  private void paxValue(String key, String value) {
    switch (key) {
      case "path" -> pax.path = value;
      case "linkpath" -> pax.link = value;
      case "size" -> pax.size = paxNumber(key, value);
      case "uid" -> pax.uid = paxNumber(key, value);
      case "gid" -> pax.gid = paxNumber(key, value);
      case "mtime" -> {
        int dot = value.indexOf('.');
        pax.mtime = paxNumber(key, dot < 0 ? value : value.substring(0, dot));
      }
      default -> {}
    }
  }

  private static long paxNumber(String key, String value) {
    if (!value.matches("[0-9]{1,18}")) {
      throw new BoxValidationException("the image's pax header has an invalid " + key);
    }
    return Long.parseLong(value);
  }

  /** Reads the contents of a metadata member, bounded, and its padding. */
  private byte[] meta(long size) throws IOException {
    if (size > MAX_META_BYTES) {
      throw new BoxValidationException("the image has a metadata member of " + size + " bytes");
    }
    byte[] bytes = readExactly((int) size);
    skip(padding(size));
    return bytes;
  }

  private void copy(OutputStream out, long size) throws IOException {
    byte[] buffer = new byte[64 * 1024];
    long left = size;
    while (left > 0) {
      int n = (int) Math.min(buffer.length, left);
      count(n);
      if (in.readNBytes(buffer, 0, n) != n) {
        throw new BoxValidationException("the image's archive ends in the middle of a member");
      }
      out.write(buffer, 0, n);
      left -= n;
    }
    skip(padding(size));
  }

  private byte[] readExactly(int size) throws IOException {
    count(size);
    byte[] bytes = in.readNBytes(size);
    if (bytes.length != size) {
      throw new BoxValidationException("the image's archive ends in the middle of a member");
    }
    return bytes;
  }

  private void skip(long size) throws IOException {
    long left = size;
    byte[] buffer = new byte[64 * 1024];
    while (left > 0) {
      int n = (int) Math.min(buffer.length, left);
      readExactly(n);
      left -= n;
    }
  }

  private boolean readBlock(byte[] block) throws IOException {
    count(BLOCK);
    int n = in.readNBytes(block, 0, BLOCK);
    if (n == 0) {
      return false;
    }
    if (n != BLOCK) {
      throw new BoxValidationException("the image's archive ends in the middle of a header");
    }
    return true;
  }

  private void count(long bytes) {
    read += bytes;
    if (read > maxBytes) {
      throw new BoxValidationException(
          "the image's file system is larger than " + (maxBytes >> 20) + " MiB");
    }
  }

  private static long padding(long size) {
    return (BLOCK - size % BLOCK) % BLOCK;
  }

  private static void checkSum(byte[] header) {
    long sum = 0;
    for (int i = 0; i < BLOCK; i++) {
      sum += i >= 148 && i < 156 ? ' ' : header[i] & 0xff;
    }
    if (sum != number(header, 148, 8)) {
      throw new BoxValidationException("the image's archive has a header with a wrong checksum");
    }
  }

  /** A numeric field: octal digits, or base-256 when its first byte's high bit is set. */
  private static long number(byte[] header, int offset, int length) {
    if ((header[offset] & 0x80) != 0) {
      long value = header[offset] & 0x7f;
      for (int i = offset + 1; i < offset + length; i++) {
        if (value >>> 55 != 0) {
          throw new BoxValidationException("the image's archive has a number out of range");
        }
        value = (value << 8) | (header[i] & 0xff);
      }
      return value;
    }
    String text = text(header, offset, length).strip();
    if (text.isEmpty()) {
      return 0;
    }
    if (!text.matches("[0-7]{1,21}")) {
      throw new BoxValidationException("the image's archive has an invalid number: " + shown(text));
    }
    return Long.parseLong(text, 8);
  }

  private static String ustarName(byte[] header) {
    String name = text(header, 0, 100);
    boolean ustar = text(header, 257, 5).equals("ustar");
    String prefix = ustar ? text(header, 345, 155) : "";
    return prefix.isEmpty() ? name : prefix + "/" + name;
  }

  private static String text(byte[] header, int offset, int length) {
    int end = offset;
    while (end < offset + length && header[end] != 0) {
      end++;
    }
    return new String(header, offset, end - offset, StandardCharsets.UTF_8);
  }

  private static String cString(byte[] bytes) {
    return text(bytes, 0, bytes.length);
  }

  private static boolean allZero(byte[] block) {
    for (byte b : block) {
      if (b != 0) {
        return false;
      }
    }
    return true;
  }

  private static int indexOf(byte[] bytes, byte b, int from) {
    for (int i = from; i < bytes.length; i++) {
      if (bytes[i] == b) {
        return i;
      }
    }
    return -1;
  }

  /** A name shortened and with control characters replaced, to be quoted in a message. */
  private static String shown(String text) {
    String printable = text.replaceAll("[^\\x20-\\x7e]", "?");
    return printable.length() > 120 ? printable.substring(0, 120) + "..." : printable;
  }
}
