package dev.box.core.files;

import dev.box.api.BoxArchiveExtracted;
import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.BoxFileList;
import dev.box.api.BoxFileWritten;
import dev.box.api.BoxRuntimeUnavailableException;
import dev.box.api.BoxValidationException;
import dev.box.core.RuntimeConfig.FileLimits;
import dev.box.core.backend.Sandbox;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The file operations of the files routes on one sandbox, each a fixed program ({@link
 * FileScripts}) spawned in it as the sandbox user, so that the sandbox's own view resolves every
 * path: a symbolic link or {@code ..} reaches only what the sandbox can see, and a read-only mount
 * refuses writes with the kernel's own error. Every byte that crosses is counted against {@link
 * FileLimits}, since the sandbox may lie about sizes.
 *
 * <p>An archive upload is checked whole by {@link TarGuard} into a spool file on the host before
 * any of it reaches {@code tar -x}, so that a refused archive extracts nothing.
 */
public final class SandboxFiles {
  private static final Logger log = LoggerFactory.getLogger(SandboxFiles.class);
  private static final int BUFFER = 64 * 1024;

  private final FileLimits limits;
  private final Executor pumps;
  private final Path spoolDir;

  /**
   * Creates the operations.
   *
   * @param limits the bounds of sizes and entries
   * @param pumps runs the reader of each program's stderr (platform threads)
   * @param spoolDir a private host directory for archives being checked, created when missing
   */
  public SandboxFiles(FileLimits limits, Executor pumps, Path spoolDir) {
    this.limits = limits;
    this.pumps = pumps;
    this.spoolDir = spoolDir;
  }

  /** The bounds in force. */
  public FileLimits limits() {
    return limits;
  }

  /**
   * Writes {@code body} to {@code path} (parents created) through a temporary file beside it,
   * renamed over it at the end: a write that fails or exceeds the bound leaves nothing behind.
   *
   * @param declaredLength the body's length when the request said it, else -1
   */
  public BoxFileWritten write(Sandbox sandbox, String path, InputStream body, long declaredLength)
      throws IOException {
    if (declaredLength > limits.maxFileBytes()) {
      throw fileTooLarge(declaredLength);
    }
    String tempName = ".box-upload-" + HexFormat.of().toHexDigits(randomLong());
    Map<String, String> env = Map.of("BOX_PATH", path, "BOX_TMP_NAME", tempName);
    long written = 0;
    boolean done = false;
    FileProgram program = FileProgram.start(sandbox, FileScripts.WRITE, env, true, pumps);
    try {
      OutputStream stdin = program.process().stdin();
      byte[] buffer = new byte[BUFFER];
      int n;
      while ((n = body.read(buffer)) >= 0) {
        written += n;
        if (written > limits.maxFileBytes()) {
          throw fileTooLarge(written);
        }
        try {
          stdin.write(buffer, 0, n);
        } catch (IOException e) {
          // The program ended early: its stderr says why.
          program.kill();
          throw program.failure("writing " + path);
        }
      }
      stdin.close();
      program.finish("writing " + path);
      done = true;
      return new BoxFileWritten(path, written);
    } finally {
      if (!done) {
        program.kill();
        removeQuietly(sandbox, env);
      }
      program.release();
    }
  }

  /**
   * Starts reading the regular file {@code path}: refused with 413 before any byte when it is
   * larger than the bound; the copy stops at the size it had then.
   */
  public FileDownload read(Sandbox sandbox, String path) throws IOException {
    return download(sandbox, FileScripts.READ, path, true);
  }

  /** Lists the directory {@code path}, or the one entry of a file; at most the entry bound. */
  public BoxFileList list(Sandbox sandbox, String path) throws IOException {
    FileProgram program =
        FileProgram.start(sandbox, FileScripts.LIST, Map.of("BOX_PATH", path), false, pumps);
    try {
      Listing listing = Listing.read(program.process().stdout(), path, limits.maxArchiveEntries());
      if (listing.truncated()) {
        program.kill();
      } else {
        program.finish("listing " + path);
      }
      return listing.toList();
    } finally {
      program.kill();
      program.release();
    }
  }

  /** Removes {@code path}, a directory with everything in it; {@code /} is refused. */
  public void delete(Sandbox sandbox, String path) throws IOException {
    if (path.equals("/")) {
      throw new BoxValidationException("the root directory cannot be deleted");
    }
    FileProgram program =
        FileProgram.start(sandbox, FileScripts.DELETE, Map.of("BOX_PATH", path), false, pumps);
    try {
      program.process().stdout().transferTo(OutputStream.nullOutputStream());
      program.finish("deleting " + path);
    } finally {
      program.kill();
      program.release();
    }
  }

  /**
   * Starts a tar of {@code path} (a directory's contents, or one file): refused with 413 before any
   * byte when the apparent size of what it holds is beyond the archive bound, and cut when the tar
   * grows beyond it.
   */
  public FileDownload archive(Sandbox sandbox, String path) throws IOException {
    return download(sandbox, FileScripts.ARCHIVE, path, false);
  }

  /**
   * Starts {@code script}, which prints a size line then the content: a file of exactly that size
   * when {@code file}, else an archive of at most the archive bound.
   */
  private FileDownload download(Sandbox sandbox, String script, String path, boolean file)
      throws IOException {
    String what = (file ? "reading " : "archiving ") + path;
    FileProgram program =
        FileProgram.start(sandbox, script, Map.of("BOX_PATH", path), false, pumps);
    try {
      long size = program.sizeLine(what);
      long bound = file ? limits.maxFileBytes() : limits.maxArchiveBytes();
      if (size > bound) {
        throw file ? fileTooLarge(size) : archiveTooLarge();
      }
      return file
          ? new Transfer(program, what, size, size)
          : new Transfer(program, what, -1, bound);
    } catch (IOException | RuntimeException e) {
      program.kill();
      program.release();
      throw e;
    }
  }

  /**
   * Extracts the tar {@code body} into the directory {@code path} (created when missing) once
   * {@link TarGuard} has checked all of it; a refused archive extracts nothing.
   *
   * @param declaredLength the body's length when the request said it, else -1
   */
  public BoxArchiveExtracted extract(
      Sandbox sandbox, String path, InputStream body, long declaredLength) throws IOException {
    if (declaredLength > limits.maxArchiveBytes()) {
      throw archiveTooLarge();
    }
    Path spool = spoolFile();
    try {
      TarGuard.Summary summary;
      try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(spool), BUFFER)) {
        summary = TarGuard.copy(body, out, limits.maxArchiveBytes(), limits.maxArchiveEntries());
      }
      FileProgram program =
          FileProgram.start(sandbox, FileScripts.EXTRACT, Map.of("BOX_PATH", path), true, pumps);
      try {
        try (OutputStream stdin = program.process().stdin()) {
          Files.copy(spool, stdin);
        } catch (IOException e) {
          program.kill();
          throw program.failure("extracting into " + path);
        }
        program.finish("extracting into " + path);
      } finally {
        program.kill();
        program.release();
      }
      return new BoxArchiveExtracted(path, summary.entries(), summary.bytes());
    } finally {
      Files.deleteIfExists(spool);
    }
  }

  private Path spoolFile() throws IOException {
    Files.createDirectories(spoolDir);
    return Files.createTempFile(
        spoolDir,
        "archive-",
        ".tar",
        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
  }

  private void removeQuietly(Sandbox sandbox, Map<String, String> env) {
    try {
      FileProgram cleanup = FileProgram.start(sandbox, FileScripts.REMOVE_TEMP, env, false, pumps);
      try {
        cleanup.finish("removing an aborted upload");
      } finally {
        cleanup.kill();
        cleanup.release();
      }
    } catch (RuntimeException e) {
      log.warn("could not remove the temporary file of an aborted upload: {}", e.toString());
    }
  }

  private BoxException fileTooLarge(long size) {
    return new BoxException(
        BoxErrorCode.PAYLOAD_TOO_LARGE,
        "the file is larger than max_file_bytes ("
            + limits.maxFileBytes()
            + " bytes): at least "
            + size
            + " bytes");
  }

  private BoxException archiveTooLarge() {
    return new BoxException(
        BoxErrorCode.PAYLOAD_TOO_LARGE,
        "the archive is larger than max_archive_bytes (" + limits.maxArchiveBytes() + " bytes)");
  }

  private static long randomLong() {
    return ThreadLocalRandom.current().nextLong();
  }

  /** A download's copy: exactly {@code exact} bytes when known, else up to {@code bound}. */
  private record Transfer(FileProgram program, String what, long exact, long bound)
      implements FileDownload {
    @Override
    public long size() {
      return exact;
    }

    @Override
    public void transferTo(OutputStream out) throws IOException {
      InputStream stdout = program.process().stdout();
      byte[] buffer = new byte[BUFFER];
      long copied = 0;
      long limit = exact >= 0 ? exact : bound;
      int n;
      while (copied < limit
          && (n = stdout.read(buffer, 0, (int) Math.min(buffer.length, limit - copied))) >= 0) {
        out.write(buffer, 0, n);
        copied += n;
      }
      if (exact >= 0) {
        if (copied < exact) {
          throw new IOException(what + ": the file shrank while it was read");
        }
        // Whatever the file grew by since its size was read is not sent.
        program.kill();
        return;
      }
      if (copied >= bound && stdout.read() >= 0) {
        throw new IOException(
            what + ": the archive grew beyond max_archive_bytes (" + bound + " bytes)");
      }
      // tar exits 1 when a file changed while it was read, which still gives a whole archive.
      int exit = program.exitCode(what);
      if (exit > 1) {
        throw new IOException(what + ": " + program.failure(what).getMessage());
      }
    }

    @Override
    public void close() {
      program.kill();
      program.release();
    }
  }

  static BoxRuntimeUnavailableException interrupted(String what) {
    Thread.currentThread().interrupt();
    return new BoxRuntimeUnavailableException(what + " was interrupted");
  }
}
