package dev.box.server;

import com.sun.security.auth.module.UnixSystem;
import dev.box.api.BoxDataDir;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The control token a server generates when none is configured, kept in {@code <data
 * dir>/control-token} and reused by every later start on that data directory.
 *
 * <p>A new token is 32 bytes from {@link SecureRandom} in URL-safe base64 (43 characters). It is
 * written to a temporary file created with mode 0600 (open(2) gets the mode, so the file is never
 * readable by others, not even for an instant), flushed, then renamed into place, so a reader never
 * sees half a token. The caller holds the data directory's lock, so no other server creates the
 * file at the same time.
 *
 * <p>An existing file is refused, not repaired: when it is a symbolic link or not a regular file,
 * belongs to another user, can be read or written by group or others, or holds no usable token. A
 * file others could read may have leaked its token, and quietly tightening its mode would keep that
 * token valid; the message says how to fix it (delete the file to get a new token, or {@code chmod
 * 600} it when the token is known to be safe).
 */
final class ControlTokenFile {
  private static final Logger log = LoggerFactory.getLogger(ControlTokenFile.class);

  /** Random bytes in a generated token. */
  static final int RANDOM_BYTES = 32;

  /** The fewest characters a token read from the file may have. */
  static final int MIN_CHARS = 32;

  private static final Set<PosixFilePermission> OWNER_ONLY =
      PosixFilePermissions.fromString("rw-------");
  private static final Set<PosixFilePermission> GROUP_OR_OTHERS =
      EnumSet.complementOf(
          EnumSet.of(
              PosixFilePermission.OWNER_READ,
              PosixFilePermission.OWNER_WRITE,
              PosixFilePermission.OWNER_EXECUTE));

  private ControlTokenFile() {}

  /**
   * The token in {@code dataDir}'s control-token file, generated first when the file does not
   * exist.
   *
   * @throws IllegalStateException with a message for the operator when the file is refused or
   *     cannot be read or written
   */
  static String readOrCreate(Path dataDir, SecureRandom random) {
    Path file = BoxDataDir.tokenFile(dataDir);
    PosixFileAttributes attributes;
    try {
      attributes = Files.readAttributes(file, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
    } catch (NoSuchFileException e) {
      try {
        return create(file, random);
      } catch (IOException failed) {
        throw new IllegalStateException(
            "cannot write the control token file " + file + ": " + failed, failed);
      }
    } catch (IOException e) {
      throw new IllegalStateException("cannot use the control token file " + file + ": " + e, e);
    }
    try {
      check(file, attributes);
      String token = BoxDataDir.readToken(file);
      if (token.length() < MIN_CHARS) {
        throw refused(file, "holds a token of fewer than " + MIN_CHARS + " characters");
      }
      return token;
    } catch (AccessDeniedException e) {
      throw refused(file, "cannot be read by this user");
    } catch (IOException e) {
      throw new IllegalStateException(
          "cannot use the control token: "
              + e.getMessage()
              + ". Delete "
              + file
              + " to have a new token generated, or configure --control-token.",
          e);
    }
  }

  private static void check(Path file, PosixFileAttributes attributes) throws IOException {
    if (attributes.isSymbolicLink()) {
      throw refused(file, "is a symbolic link");
    }
    if (!attributes.isRegularFile()) {
      throw refused(file, "is not a regular file");
    }
    int owner = (Integer) Files.getAttribute(file, "unix:uid", LinkOption.NOFOLLOW_LINKS);
    long self = new UnixSystem().getUid();
    if (owner != self) {
      throw refused(file, "belongs to uid " + owner + ", not to this server's uid " + self);
    }
    Set<PosixFilePermission> loose = EnumSet.noneOf(PosixFilePermission.class);
    loose.addAll(attributes.permissions());
    loose.retainAll(GROUP_OR_OTHERS);
    if (!loose.isEmpty()) {
      throw new IllegalStateException(
          "refusing the control token file "
              + file
              + ": its mode is "
              + PosixFilePermissions.toString(attributes.permissions())
              + ", so others than its owner may have read the token. Delete it to have a new"
              + " token generated, or 'chmod 600' it if you are sure the token did not leak.");
    }
  }

  private static String create(Path file, SecureRandom random) throws IOException {
    byte[] bytes = new byte[RANDOM_BYTES];
    random.nextBytes(bytes);
    String token = Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    byte[] suffix = new byte[8];
    random.nextBytes(suffix);
    Path temporary =
        file.resolveSibling("." + file.getFileName() + "-" + HexFormat.of().formatHex(suffix));
    try {
      // CREATE_NEW is O_EXCL: it neither follows a link planted at that name nor reuses a file.
      try (FileChannel channel =
          FileChannel.open(
              temporary,
              EnumSet.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
              PosixFilePermissions.asFileAttribute(OWNER_ONLY))) {
        Files.setPosixFilePermissions(temporary, OWNER_ONLY); // The umask only ever removes bits.
        channel.write(ByteBuffer.wrap((token + "\n").getBytes(StandardCharsets.US_ASCII)));
        channel.force(true);
      }
      Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE);
    } finally {
      Files.deleteIfExists(temporary);
    }
    log.info("generated a control token in {}", file);
    return token;
  }

  private static IllegalStateException refused(Path file, String why) {
    return new IllegalStateException(
        "refusing the control token file "
            + file
            + ": it "
            + why
            + ". Delete it to have a new token generated, or configure --control-token.");
  }
}
