package dev.box.langbot;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.Charset;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.zip.CRC32;
import java.util.zip.DataFormatException;
import java.util.zip.Inflater;

/**
 * Unpacks an uploaded skill ZIP, which is hostile, with the bounds of LangBot's skill store: at
 * most {@value #MAX_COMPRESSED_BYTES} bytes compressed and {@value #MAX_ENTRIES} entries, each
 * entry at most {@value #MAX_ENTRY_BYTES} bytes, {@value #MAX_TOTAL_BYTES} bytes in all, and a
 * compression ratio of at most {@value #MAX_RATIO}; no symbolic links, devices, absolute, drive or
 * climbing paths, no two entries at one path.
 *
 * <p>The archive is read here rather than by {@code java.util.zip.ZipFile}, because the file type
 * of an entry (which says "symbolic link") lives in the central directory's external attributes,
 * which the JDK does not expose. Every entry is checked before the first byte is written; then each
 * is inflated through a byte counter, because the sizes a header states may lie.
 */
final class SkillZip {
  static final int MAX_COMPRESSED_BYTES = 20 * 1024 * 1024;
  static final int MAX_ENTRIES = 512;
  static final long MAX_ENTRY_BYTES = 16L * 1024 * 1024;
  static final long MAX_TOTAL_BYTES = 64L * 1024 * 1024;
  static final int MAX_RATIO = 100;

  private static final int END_SIGNATURE = 0x06054b50;
  private static final int CENTRAL_SIGNATURE = 0x02014b50;
  private static final int LOCAL_SIGNATURE = 0x04034b50;
  private static final int TYPE_MASK = 0170000;
  private static final int TYPE_LINK = 0120000;
  private static final int TYPE_FILE = 0100000;
  private static final int TYPE_DIR = 0040000;
  private static final int CHUNK = 64 * 1024;

  private SkillZip() {}

  /** One checked entry of the central directory. */
  private record Member(
      String name,
      Path destination,
      boolean directory,
      int method,
      long crc,
      long compressedSize,
      long size,
      long localOffset,
      boolean executable) {}

  /**
   * Unpacks {@code zip} into {@code target}, an empty directory.
   *
   * @throws SkillException with the reference's message when the archive is invalid or breaks a
   *     bound; {@code target} may then hold part of the archive, which the caller removes
   */
  static void extract(byte[] zip, Path target) throws IOException {
    if (zip.length > MAX_COMPRESSED_BYTES) {
      throw new SkillException(
          "Uploaded archive exceeds the compressed size limit ("
              + MAX_COMPRESSED_BYTES
              + " bytes)");
    }
    ByteBuffer buffer = ByteBuffer.wrap(zip).order(ByteOrder.LITTLE_ENDIAN);
    List<Member> members = centralDirectory(buffer, target);
    long total = 0;
    for (Member member : members) {
      if (member.directory()) {
        createDirectory(member.destination());
        continue;
      }
      createDirectory(parent(member.destination()));
      total += copy(buffer, member, total);
      Files.setPosixFilePermissions(
          member.destination(),
          PosixFilePermissions.fromString(member.executable() ? "rwxr-xr-x" : "rw-r--r--"));
    }
  }

  private static List<Member> centralDirectory(ByteBuffer zip, Path target) {
    int end = findEnd(zip);
    if (u16(zip, end + 4) != 0 || u16(zip, end + 6) != 0) {
      throw invalid();
    }
    int count = u16(zip, end + 10);
    long size = u32(zip, end + 12);
    long offset = u32(zip, end + 16);
    if (count > MAX_ENTRIES) {
      throw new SkillException("Archive contains too many entries (maximum " + MAX_ENTRIES + ")");
    }
    if (u16(zip, end + 8) != count || offset + size > end) {
      throw invalid();
    }
    List<Member> members = new ArrayList<>();
    Set<Path> seen = new HashSet<>();
    Set<Path> files = new HashSet<>();
    long compressed = 0;
    long uncompressed = 0;
    int at = (int) offset;
    for (int i = 0; i < count; i++) {
      if (at + 46 > end || zip.getInt(at) != CENTRAL_SIGNATURE) {
        throw invalid();
      }
      int flags = u16(zip, at + 8);
      int nameLength = u16(zip, at + 28);
      int next = at + 46 + nameLength + u16(zip, at + 30) + u16(zip, at + 32);
      if (next > end) {
        throw invalid();
      }
      String name = name(zip, at + 46, nameLength, (flags & 0x800) != 0);
      int mode = (int) (u32(zip, at + 38) >>> 16);
      Member member =
          check(
              name,
              target,
              mode,
              flags,
              u16(zip, at + 10),
              u32(zip, at + 16),
              u32(zip, at + 20),
              u32(zip, at + 24),
              u32(zip, at + 42));
      if (!seen.add(member.destination())) {
        throw new SkillException("Archive contains a duplicate path: " + name);
      }
      if (!member.directory()) {
        files.add(member.destination());
        compressed += member.compressedSize();
        uncompressed += member.size();
        if (compressed > MAX_COMPRESSED_BYTES) {
          throw new SkillException("Archive exceeds the compressed size limit");
        }
        if (uncompressed > MAX_TOTAL_BYTES) {
          throw new SkillException("Archive exceeds the total uncompressed size limit");
        }
      }
      members.add(member);
      at = next;
    }
    for (Member member : members) {
      for (Path p = parent(member.destination()); !p.equals(target); p = parent(p)) {
        if (files.contains(p)) {
          throw new SkillException("Archive contains a duplicate path: " + member.name());
        }
      }
    }
    if (uncompressed > 0 && (compressed == 0 || uncompressed > compressed * MAX_RATIO)) {
      throw new SkillException("Archive exceeds the aggregate compression ratio limit");
    }
    return members;
  }

  private static Member check(
      String name,
      Path target,
      int mode,
      int flags,
      int method,
      long crc,
      long compressedSize,
      long size,
      long localOffset) {
    if (name.isEmpty() || name.indexOf('\0') >= 0) {
      throw new SkillException("Archive contains an unsafe empty or NUL path");
    }
    String portable = name.replace('\\', '/');
    Path normal;
    try {
      normal = Path.of(portable).normalize();
    } catch (InvalidPathException e) {
      throw unsafe(name);
    }
    String first = normal.getNameCount() == 0 ? "" : normal.getName(0).toString();
    if (portable.startsWith("/")
        || normal.toString().isEmpty()
        || normal.startsWith("..")
        || (first.length() >= 2 && first.charAt(1) == ':')) {
      throw unsafe(name);
    }
    Path destination = target.resolve(normal).normalize();
    if (!destination.startsWith(target) || destination.equals(target)) {
      throw unsafe(name);
    }
    int type = mode & TYPE_MASK;
    if (type == TYPE_LINK) {
      throw new SkillException("Archive contains a symbolic link: " + name);
    }
    if (type != 0 && type != TYPE_FILE && type != TYPE_DIR) {
      throw new SkillException("Archive contains a non-regular entry: " + name);
    }
    boolean directory = portable.endsWith("/") || type == TYPE_DIR;
    if (directory && size != 0) {
      throw new SkillException("Archive directory has unexpected content: " + name);
    }
    if (!directory) {
      if ((flags & 1) != 0) {
        throw new SkillException("Archive entry is encrypted: " + name);
      }
      if (method != 0 && method != 8) {
        throw new SkillException("Archive entry uses an unsupported compression method: " + name);
      }
      if (size > MAX_ENTRY_BYTES) {
        throw new SkillException("Archive entry exceeds the uncompressed size limit: " + name);
      }
      if (size > 0 && (compressedSize == 0 || size > compressedSize * MAX_RATIO)) {
        throw new SkillException("Archive entry exceeds the compression ratio limit: " + name);
      }
    }
    return new Member(
        name,
        destination,
        directory,
        method,
        crc,
        compressedSize,
        size,
        localOffset,
        (mode & 0111) != 0);
  }

  /** Copies one entry through a byte counter; returns the bytes written. */
  private static long copy(ByteBuffer zip, Member member, long totalBefore) throws IOException {
    int local = (int) member.localOffset();
    if (local + 30 > zip.limit() || zip.getInt(local) != LOCAL_SIGNATURE) {
      throw invalid();
    }
    long start = (long) local + 30 + u16(zip, local + 26) + u16(zip, local + 28);
    if (start + member.compressedSize() > zip.limit()) {
      throw invalid();
    }
    byte[] input = new byte[(int) member.compressedSize()];
    zip.get((int) start, input);
    CRC32 crc = new CRC32();
    long written = 0;
    Inflater inflater = new Inflater(true);
    try (OutputStream out =
        Files.newOutputStream(
            member.destination(),
            LinkOption.NOFOLLOW_LINKS,
            StandardOpenOption.CREATE_NEW,
            StandardOpenOption.WRITE)) {
      byte[] chunk = new byte[CHUNK];
      int stored = 0;
      inflater.setInput(input);
      while (true) {
        int n;
        if (member.method() == 0) {
          n = Math.min(CHUNK, input.length - stored);
          System.arraycopy(input, stored, chunk, 0, n);
          stored += n;
        } else {
          n = inflater.inflate(chunk);
          if (n == 0 && !inflater.finished()) {
            throw corrupt(member.name());
          }
        }
        if (n == 0 && (member.method() == 0 || inflater.finished())) {
          break;
        }
        written += n;
        if (written > MAX_ENTRY_BYTES) {
          throw new SkillException(
              "Archive entry exceeds the uncompressed size limit: " + member.name());
        }
        if (totalBefore + written > MAX_TOTAL_BYTES) {
          throw new SkillException("Archive exceeds the total uncompressed size limit");
        }
        crc.update(chunk, 0, n);
        out.write(chunk, 0, n);
      }
    } catch (DataFormatException e) {
      throw corrupt(member.name());
    } finally {
      inflater.end();
    }
    if (written != member.size()) {
      throw new SkillException("Archive entry size changed while extracting: " + member.name());
    }
    if (crc.getValue() != member.crc()) {
      throw corrupt(member.name());
    }
    return written;
  }

  /**
   * Creates {@code dir} and its missing parents 0755 (a loop, not a recursion: an entry may be
   * thousands of directories deep).
   */
  private static void createDirectory(Path dir) throws IOException {
    if (Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    Files.createDirectories(
        dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
  }

  /** The offset of the end-of-central-directory record, searched back over a possible comment. */
  private static int findEnd(ByteBuffer zip) {
    for (int at = zip.limit() - 22; at >= Math.max(0, zip.limit() - 22 - 0xFFFF); at--) {
      if (zip.getInt(at) == END_SIGNATURE) {
        if (u16(zip, at + 10) == 0xFFFF || u32(zip, at + 16) == 0xFFFFFFFFL) {
          throw new SkillException(
              "Uploaded file must be a valid .zip archive (ZIP64 archives are not supported)");
        }
        return at;
      }
    }
    throw invalid();
  }

  /** An entry name: UTF-8 when flagged or valid, else the ZIP format's old code page. */
  private static String name(ByteBuffer zip, int at, int length, boolean utf8) {
    byte[] bytes = new byte[length];
    zip.get(at, bytes);
    try {
      return SkillPackages.strictUtf8(bytes);
    } catch (CharacterCodingException e) {
      if (utf8 || !Charset.isSupported("IBM437")) {
        throw invalid();
      }
      return new String(bytes, Charset.forName("IBM437"));
    }
  }

  /** The parent of a path below the extraction directory, which always has one. */
  private static Path parent(Path path) {
    return Objects.requireNonNull(path.getParent());
  }

  private static int u16(ByteBuffer zip, int at) {
    if (at < 0 || at + 2 > zip.limit()) {
      throw invalid();
    }
    return Short.toUnsignedInt(zip.getShort(at));
  }

  private static long u32(ByteBuffer zip, int at) {
    if (at < 0 || at + 4 > zip.limit()) {
      throw invalid();
    }
    return Integer.toUnsignedLong(zip.getInt(at));
  }

  private static SkillException invalid() {
    return new SkillException("Uploaded file must be a valid .zip archive");
  }

  private static SkillException unsafe(String name) {
    return new SkillException("Archive contains an unsafe path: " + name);
  }

  private static SkillException corrupt(String name) {
    return new SkillException("Archive entry is corrupt: " + name);
  }
}
