package dev.box.core.files;

import dev.box.api.internal.ShellScript;

/**
 * The fixed programs the files routes run inside a sandbox with {@code /bin/sh}, kept as {@code
 * .sh} resources beside this class (shellcheck reads them in the test phase). Nothing from the
 * request is in them: the path arrives in {@code BOX_PATH} (absolute, see {@link SandboxPath}) and
 * any other value in a {@code BOX_*} variable. They use only POSIX sh, coreutils, findutils and GNU
 * tar, which Debian's base system and the host root of the namespace backends both have.
 *
 * <p>A program that fails says why on stderr in coreutils' words ("No such file or directory", "Is
 * a directory", ...), which {@link FileFailures} turns into the client's error; one that answers a
 * size first prints it on a line of its own before any content.
 */
final class FileScripts {
  /** Prints the size of the regular file {@code BOX_PATH} on a line, then its bytes. */
  static final String READ = ShellScript.load(FileScripts.class, "read.sh");

  /**
   * Writes stdin to {@code BOX_PATH}, creating its parent directories: into the file {@code
   * BOX_TMP_NAME} beside it first, renamed over it once stdin ended.
   */
  static final String WRITE = ShellScript.load(FileScripts.class, "write.sh");

  /** Removes the file {@code BOX_TMP_NAME} beside {@code BOX_PATH}: what an aborted write left. */
  static final String REMOVE_TEMP = ShellScript.load(FileScripts.class, "remove-temp.sh");

  /**
   * Lists the directory {@code BOX_PATH} (or the one entry of anything else), one entry per
   * NUL-terminated record: type, size, octal mode, mtime in seconds, depth (0 for {@code BOX_PATH}
   * itself), name.
   */
  static final String LIST = ShellScript.load(FileScripts.class, "list.sh");

  /** Removes {@code BOX_PATH}, a directory with everything in it. */
  static final String DELETE = ShellScript.load(FileScripts.class, "delete.sh");

  /**
   * Prints the apparent size of {@code BOX_PATH} on a line, then a tar of it: of the directory's
   * contents for a directory, else of the one entry.
   */
  static final String ARCHIVE = ShellScript.load(FileScripts.class, "archive.sh");

  /** Extracts the tar on stdin into the directory {@code BOX_PATH}, created when missing. */
  static final String EXTRACT = ShellScript.load(FileScripts.class, "extract.sh");

  private FileScripts() {}
}
