package dev.box.core.files;

import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import java.util.List;
import java.util.Locale;

/**
 * Turns the failure of a file program inside a sandbox (its exit code and the first line of its
 * stderr) into the error a client sees: the errno text of coreutils, findutils and tar decides the
 * code, and the program's own line is the message.
 */
final class FileFailures {
  private record Rule(String text, BoxErrorCode code) {}

  /** Checked in order: the first whose text the stderr line holds wins. */
  private static final List<Rule> RULES =
      List.of(
          new Rule("no such file or directory", BoxErrorCode.FILE_NOT_FOUND),
          new Rule("read-only file system", BoxErrorCode.READ_ONLY),
          new Rule("permission denied", BoxErrorCode.PERMISSION_DENIED),
          new Rule("operation not permitted", BoxErrorCode.PERMISSION_DENIED),
          new Rule("is a directory", BoxErrorCode.FILE_TYPE_CONFLICT),
          new Rule("not a directory", BoxErrorCode.FILE_TYPE_CONFLICT),
          new Rule("not a regular file", BoxErrorCode.FILE_TYPE_CONFLICT),
          new Rule("file exists", BoxErrorCode.FILE_TYPE_CONFLICT),
          new Rule("directory not empty", BoxErrorCode.FILE_TYPE_CONFLICT),
          new Rule("no space left on device", BoxErrorCode.STORAGE_FULL),
          new Rule("disk quota exceeded", BoxErrorCode.STORAGE_FULL),
          new Rule("file too large", BoxErrorCode.STORAGE_FULL),
          new Rule("file name too long", BoxErrorCode.VALIDATION_ERROR),
          new Rule("too many levels of symbolic links", BoxErrorCode.VALIDATION_ERROR),
          new Rule("invalid argument", BoxErrorCode.VALIDATION_ERROR));

  private static final int MAX_MESSAGE_CHARS = 500;

  private FileFailures() {}

  /**
   * The error for a file program that exited with {@code exitCode} after writing {@code stderr}.
   *
   * @param what what the program did, for the message when its stderr says nothing known
   */
  static BoxException of(String what, int exitCode, String stderr) {
    String line = firstLine(stderr);
    String lower = line.toLowerCase(Locale.ROOT);
    for (Rule rule : RULES) {
      if (lower.contains(rule.text())) {
        return new BoxException(rule.code(), line);
      }
    }
    return new BoxException(
        BoxErrorCode.INTERNAL_ERROR,
        what
            + " failed inside the sandbox (exit "
            + exitCode
            + (line.isEmpty() ? ")" : "): " + line));
  }

  private static String firstLine(String stderr) {
    String line =
        stderr
            .lines()
            .map(String::strip)
            .filter(l -> !l.isEmpty() && !l.startsWith("tar: Exiting with failure"))
            .findFirst()
            .orElse("");
    return line.length() > MAX_MESSAGE_CHARS ? line.substring(0, MAX_MESSAGE_CHARS) : line;
  }
}
