package dev.box.api;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;

/**
 * What a client on the server's machine may rely on in a server's data directory: where it is by
 * default, the directory inside it that holds the server's private state, and the file in which a
 * server started without a configured token keeps the control token it generated.
 *
 * <p>The data directory itself is shared: LangBot's default {@code box.local.host_root} is the same
 * {@code data/box}, and LangBot keeps its workspaces ({@code default/tenants/<ns>}) and skills
 * ({@code skills/}) there. Everything the server keeps for itself (private workspaces, the control
 * token, the lock, generated files) lives in {@link #STATE_DIR} inside it, and only that directory
 * (with its ancestors) is refused as a mount.
 *
 * <p>The server and the client both read these constants, so that {@code box exec} finds the token
 * of a {@code box serve} started in the same working directory with no options at all.
 */
public final class BoxDataDir {
  /** The data directory of a server given none, relative to its working directory. */
  public static final String DEFAULT = "data/box";

  /** The name of the server's private directory inside the data directory. */
  public static final String STATE_DIR = ".box-state";

  /** The name, inside the state directory, of the file holding the generated control token. */
  public static final String TOKEN_FILE = "control-token";

  /** The most bytes a token file may hold: a token is a header value, not a document. */
  private static final int MAX_TOKEN_BYTES = 4096;

  private BoxDataDir() {}

  /** {@link #DEFAULT} as an absolute path, resolved against the current working directory. */
  public static Path defaultPath() {
    return Path.of(DEFAULT).toAbsolutePath().normalize();
  }

  /** The private state directory of the data directory {@code dataDir}. */
  public static Path stateDir(Path dataDir) {
    return dataDir.toAbsolutePath().normalize().resolve(STATE_DIR);
  }

  /** The control-token file of the data directory {@code dataDir}. */
  public static Path tokenFile(Path dataDir) {
    return stateDir(dataDir).resolve(TOKEN_FILE);
  }

  /**
   * Reads the token held in {@code file}: its content without surrounding whitespace, so that a
   * file written with {@code echo} works. The file itself must not be a symbolic link (a server
   * never writes one, and refuses one at startup); the directories above it may be.
   *
   * @throws java.nio.file.NoSuchFileException when the file does not exist
   * @throws java.nio.file.AccessDeniedException when this user may not read it
   * @throws IOException when it cannot be read, or when it is a link or a directory, empty, too
   *     long or holds anything but one word of visible ASCII characters (the message names the
   *     file, never its content)
   */
  public static String readToken(Path file) throws IOException {
    if (Files.isSymbolicLink(file)) {
      throw new IOException("control token file " + file + " is a symbolic link");
    }
    if (Files.isDirectory(file, LinkOption.NOFOLLOW_LINKS)) {
      throw new IOException("control token file " + file + " is a directory");
    }
    byte[] bytes;
    // NOFOLLOW_LINKS is O_NOFOLLOW: a link planted after the check above is refused too.
    try (var in = Files.newInputStream(file, LinkOption.NOFOLLOW_LINKS)) {
      bytes = in.readNBytes(MAX_TOKEN_BYTES + 1);
    }
    if (bytes.length > MAX_TOKEN_BYTES) {
      throw new IOException(
          "control token file " + file + " holds more than " + MAX_TOKEN_BYTES + " bytes");
    }
    String token = new String(bytes, StandardCharsets.US_ASCII).strip();
    if (token.isEmpty()) {
      throw new IOException("control token file " + file + " is empty");
    }
    for (int i = 0; i < bytes.length; i++) {
      int b = bytes[i] & 0xff;
      boolean whitespace = b == ' ' || b == '\t' || b == '\n' || b == '\r';
      if (!whitespace && (b < 0x21 || b > 0x7e)) {
        throw new IOException(
            "control token file " + file + " holds characters other than visible ASCII");
      }
    }
    if (token.chars().anyMatch(Character::isWhitespace)) {
      throw new IOException("control token file " + file + " holds more than one word");
    }
    return token;
  }
}
