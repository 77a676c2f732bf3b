package dev.box.client;

import dev.box.api.BoxArchiveExtracted;
import dev.box.api.BoxException;
import dev.box.api.BoxFileList;
import dev.box.api.BoxFileWritten;
import dev.box.api.BoxRuntimeUnavailableException;
import dev.box.api.BoxValidationException;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URLEncoder;
import java.net.http.HttpRequest.BodyPublisher;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;

/**
 * The files of a server's sessions ({@link BoxClient#files()}): upload, download, list and delete
 * files, and persist or hydrate a directory as a tar.
 *
 * <p>Paths are as the sandbox sees them: absolute, or relative to the session's {@code mount_path}
 * ({@code /workspace} by default); symbolic links and {@code ..} resolve inside the sandbox. The
 * session must exist. Bodies are streamed both ways: nothing is held whole in memory. A transfer
 * may take {@link #TRANSFER_TIMEOUT} plus the client's request timeout before its answer starts.
 *
 * <p>Errors are {@link BoxException}s with the server's code: {@code file_not_found}, {@code
 * file_type_conflict}, {@code read_only}, {@code permission_denied}, {@code storage_full}, {@code
 * payload_too_large} (beyond the server's {@code max_file_bytes}, {@code max_archive_bytes} or
 * {@code max_archive_entries}), {@code validation_error} (a bad path, a refused archive entry) and
 * {@code session_not_found}. Thread-safe, as its client.
 */
public final class BoxFiles {
  /** How long an upload may take to be answered, on top of the client's request timeout. */
  public static final Duration TRANSFER_TIMEOUT = Duration.ofMinutes(10);

  private final ServerHttp http;

  BoxFiles(ServerHttp http) {
    this.http = http;
  }

  /**
   * Uploads {@code data} (read to its end, not closed) to {@code path}, creating its parent
   * directories and replacing any file there.
   */
  public BoxFileWritten write(String sessionId, String path, InputStream data) {
    return put(
        sessionId, "/files", path, BodyPublishers.ofInputStream(() -> data), BoxFileWritten.class);
  }

  /**
   * Uploads the local file {@code local} to {@code path}; see {@link #write(String, String,
   * InputStream)}.
   */
  public BoxFileWritten upload(String sessionId, Path local, String path) {
    return put(sessionId, "/files", path, ofFile(local), BoxFileWritten.class);
  }

  /**
   * Opens the file {@code path} for reading; close the stream. A stream that ends with an {@link
   * IOException} was cut by the server (the file shrank while it was read).
   */
  public InputStream open(String sessionId, String path) {
    return send("GET", route(sessionId, "/files", path), BodyPublishers.noBody()).body();
  }

  /**
   * Downloads the file {@code path} to {@code local}, through a temporary file beside it so that a
   * failed download leaves nothing.
   *
   * @return how many bytes were written
   */
  public long download(String sessionId, String path, Path local) {
    return save(open(sessionId, path), local);
  }

  /** The entries of the directory {@code path}, or the one entry of a file. */
  public BoxFileList list(String sessionId, String path) {
    return http.read(
        send("GET", route(sessionId, "/files/list", path), BodyPublishers.noBody()),
        BoxFileList.class);
  }

  /** Deletes {@code path}: a file, a symbolic link, or a directory with everything in it. */
  public void delete(String sessionId, String path) {
    http.read(
        send("DELETE", route(sessionId, "/files", path), BodyPublishers.noBody()), Object.class);
  }

  /**
   * Opens a tar of {@code path} (a directory's contents, or one file); close the stream. A stream
   * that ends with an {@link IOException} was cut by the server (the tar grew beyond its bound, or
   * failed).
   */
  public InputStream openArchive(String sessionId, String path) {
    return send("GET", route(sessionId, "/archive", path), BodyPublishers.noBody()).body();
  }

  /** Saves a tar of {@code path} to {@code local}; see {@link #openArchive}. */
  public long downloadArchive(String sessionId, String path, Path local) {
    return save(openArchive(sessionId, path), local);
  }

  /**
   * Extracts the tar {@code tar} (read to its end, not closed) into the directory {@code path},
   * created when missing. The server checks the whole archive first: one refused entry extracts
   * nothing.
   */
  public BoxArchiveExtracted extract(String sessionId, String path, InputStream tar) {
    return put(
        sessionId,
        "/archive",
        path,
        BodyPublishers.ofInputStream(() -> tar),
        BoxArchiveExtracted.class);
  }

  /**
   * Extracts the local tar file {@code local}; see {@link #extract(String, String, InputStream)}.
   */
  public BoxArchiveExtracted uploadArchive(String sessionId, Path local, String path) {
    return put(sessionId, "/archive", path, ofFile(local), BoxArchiveExtracted.class);
  }

  /** Uploads {@code body} to the {@code resource} of {@code path} and reads the JSON answer. */
  private <T> T put(
      String sessionId, String resource, String path, BodyPublisher body, Class<T> answer) {
    return http.read(send("PUT", route(sessionId, resource, path), body), answer);
  }

  private HttpResponse<InputStream> send(String method, String route, BodyPublisher body) {
    return http.stream(method, route, body, http.requestTimeout().plus(TRANSFER_TIMEOUT));
  }

  private static BodyPublisher ofFile(Path local) {
    try {
      return BodyPublishers.ofFile(local);
    } catch (FileNotFoundException e) {
      throw new BoxValidationException("cannot read " + local + ": no such file");
    }
  }

  private static long save(InputStream body, Path local) {
    Path absolute = local.toAbsolutePath();
    Path dir = absolute.getParent();
    Path temp = null;
    try (body) {
      temp = Files.createTempFile(dir, "." + absolute.getFileName() + ".", ".part");
      long size;
      try (OutputStream out = Files.newOutputStream(temp)) {
        size = body.transferTo(out);
      }
      Files.move(temp, absolute, StandardCopyOption.REPLACE_EXISTING);
      temp = null;
      return size;
    } catch (IOException e) {
      throw new BoxRuntimeUnavailableException("download to " + local + " failed: " + e, e);
    } finally {
      if (temp != null) {
        try {
          Files.deleteIfExists(temp);
        } catch (IOException e) {
          // Best effort: the download failed already.
        }
      }
    }
  }

  private static String route(String sessionId, String route, String path) {
    if (path.isEmpty()) {
      throw new BoxValidationException("path must not be empty");
    }
    return Routes.session(sessionId)
        + route
        + "?path="
        + URLEncoder.encode(path, StandardCharsets.UTF_8).replace("+", "%20");
  }
}
