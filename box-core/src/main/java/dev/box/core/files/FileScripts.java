package dev.box.core.files;

/**
 * The fixed programs the files routes run inside a sandbox with {@code /bin/sh}. Nothing from the
 * request is in them: the path arrives in {@code BOX_PATH} (absolute, see {@link SandboxPath}) and
 * any other value in a {@code BOX_*} variable. They use only POSIX sh, coreutils, findutils and GNU
 * tar, which Debian's base system and the host root of the namespace backends both have.
 *
 * <p>A program that fails says why on stderr in coreutils' words ("No such file or directory", "Is
 * a directory", ...), which {@link FileFailures} turns into the client's error; one that answers a
 * size first prints it on a line of its own before any content.
 */
final class FileScripts {
  private static final String NOT_FOUND =
      "[ -e \"$BOX_PATH\" ] || [ -L \"$BOX_PATH\" ]"
          + " || { echo \"box: $BOX_PATH: No such file or directory\" >&2; exit 1; }";

  private static final String EXISTS_FOLLOWED =
      "[ -e \"$BOX_PATH\" ] || { echo \"box: $BOX_PATH: No such file or directory\" >&2; exit 1; }";

  private static final String READABLE =
      "[ -r \"$BOX_PATH\" ] || { echo \"box: $BOX_PATH: Permission denied\" >&2; exit 1; }";

  /** Prints the size of the regular file {@code BOX_PATH} on a line, then its bytes. */
  static final String READ =
      String.join(
          "\n",
          EXISTS_FOLLOWED,
          "[ -d \"$BOX_PATH\" ] && { echo \"box: $BOX_PATH: Is a directory\" >&2; exit 1; }",
          "[ -f \"$BOX_PATH\" ] || { echo \"box: $BOX_PATH: Not a regular file\" >&2; exit 1; }",
          READABLE,
          "s=$(stat -L -c %s -- \"$BOX_PATH\") || exit 1",
          "printf '%s\\n' \"$s\"",
          "exec cat -- \"$BOX_PATH\"");

  /**
   * Writes stdin to {@code BOX_PATH}, creating its parent directories: into the file {@code
   * BOX_TMP_NAME} beside it first, renamed over it once stdin ended.
   */
  static final String WRITE =
      String.join(
          "\n",
          "d=$(dirname -- \"$BOX_PATH\") || exit 1",
          "t=\"$d/$BOX_TMP_NAME\"",
          "[ -d \"$BOX_PATH\" ] && { echo \"box: $BOX_PATH: Is a directory\" >&2; exit 1; }",
          "mkdir -p -- \"$d\" || exit 1",
          "cat > \"$t\" || { rm -f -- \"$t\"; exit 1; }",
          "mv -f -- \"$t\" \"$BOX_PATH\" || { rm -f -- \"$t\"; exit 1; }");

  /** Removes the file {@code BOX_TMP_NAME} beside {@code BOX_PATH}: what an aborted write left. */
  static final String REMOVE_TEMP = "rm -f -- \"$(dirname -- \"$BOX_PATH\")/$BOX_TMP_NAME\"";

  /**
   * Lists the directory {@code BOX_PATH} (or the one entry of anything else), one entry per
   * NUL-terminated record: type, size, octal mode, mtime in seconds, depth (0 for {@code BOX_PATH}
   * itself), name.
   */
  static final String LIST =
      String.join(
          "\n",
          NOT_FOUND,
          "if [ -d \"$BOX_PATH\" ]; then depth=1; else depth=0; fi",
          "exec find -H \"$BOX_PATH\" -mindepth $depth -maxdepth $depth"
              + " -printf '%y %s %m %T@ %d %f\\0'");

  /** Removes {@code BOX_PATH}, a directory with everything in it. */
  static final String DELETE = String.join("\n", NOT_FOUND, "exec rm -rf -- \"$BOX_PATH\"");

  /**
   * Prints the apparent size of {@code BOX_PATH} on a line, then a tar of it: of the directory's
   * contents for a directory, else of the one entry.
   */
  static final String ARCHIVE =
      String.join(
          "\n",
          EXISTS_FOLLOWED,
          READABLE,
          "s=$(du -s -b -D -- \"$BOX_PATH\" 2>/dev/null | cut -f1)",
          "printf '%s\\n' \"${s:-0}\"",
          "if [ -d \"$BOX_PATH\" ]; then exec tar -c -f - -C \"$BOX_PATH\" .; fi",
          "exec tar -c -f - -C \"$(dirname -- \"$BOX_PATH\")\" \"./$(basename -- \"$BOX_PATH\")\"");

  /** Extracts the tar on stdin into the directory {@code BOX_PATH}, created when missing. */
  static final String EXTRACT =
      String.join(
          "\n",
          "mkdir -p -- \"$BOX_PATH\" || exit 1",
          "[ -d \"$BOX_PATH\" ] || { echo \"box: $BOX_PATH: Not a directory\" >&2; exit 1; }",
          "exec tar -x -f - --no-same-owner --no-same-permissions -C \"$BOX_PATH\"");

  private FileScripts() {}
}
