package dev.box.server;

import dev.box.api.BoxDataDir;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Prepares the server's private state directory inside its data directory ({@link
 * BoxDataDir#STATE_DIR}): created owner-only, never a symbolic link, and holding what earlier
 * versions kept directly in the data directory.
 *
 * <p>The data directory is shared with LangBot, whose default {@code host_root} is the same {@code
 * data/box}: keeping Box's own files one level down lets LangBot's workspaces and skills beside
 * them be mounted while the state stays out of every sandbox.
 */
final class StateDir {
  private static final Logger log = LoggerFactory.getLogger(StateDir.class);

  /** What earlier versions kept directly in the data directory, moved into the state directory. */
  private static final List<String> LEGACY = List.of(BoxDataDir.TOKEN_FILE, "workspaces");

  private StateDir() {}

  /**
   * Creates {@code dataDir} and its state directory and moves legacy entries into it.
   *
   * @return the state directory
   * @throws IOException when a directory cannot be created, or the state directory is a symbolic
   *     link or not a directory
   */
  static Path prepare(Path dataDir) throws IOException {
    Files.createDirectories(dataDir);
    Path state = BoxDataDir.stateDir(dataDir);
    if (Files.isSymbolicLink(state)) {
      throw new IOException("state dir " + state + " is a symbolic link");
    }
    if (!Files.exists(state, LinkOption.NOFOLLOW_LINKS)) {
      Files.createDirectory(
          state,
          PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    } else if (!Files.isDirectory(state, LinkOption.NOFOLLOW_LINKS)) {
      throw new IOException("state dir " + state + " is not a directory");
    } else {
      // An existing one may have been made by hand with a looser mode: the token lives here.
      Files.setPosixFilePermissions(state, PosixFilePermissions.fromString("rwx------"));
    }
    for (String name : LEGACY) {
      Path old = dataDir.toAbsolutePath().normalize().resolve(name);
      Path moved = state.resolve(name);
      if (Files.exists(old, LinkOption.NOFOLLOW_LINKS)
          && !Files.isSymbolicLink(old)
          && !Files.exists(moved, LinkOption.NOFOLLOW_LINKS)) {
        Files.move(old, moved, StandardCopyOption.ATOMIC_MOVE);
        log.info("moved {} into the state dir {}", old, state);
      }
    }
    return state;
  }
}
