package dev.box.server.http;

import dev.box.core.files.FileDownload;
import dev.box.core.session.SessionFiles;
import io.javalin.config.JavalinConfig;
import io.javalin.http.Context;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Map;
import org.eclipse.jetty.ee10.servlet.ServletApiResponse;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The files routes: upload, download, list and delete a file, and persist or hydrate a directory as
 * a tar, in a session's sandbox ({@link SessionFiles}). Bodies are streamed both ways, never held
 * whole in memory. A download that fails once its first bytes are sent cannot become an error
 * answer any more: its connection is aborted, so that the client sees a broken transfer rather than
 * a short file.
 */
final class FileRoutes {
  private static final Logger log = LoggerFactory.getLogger(FileRoutes.class);
  private static final String FILES = "/v1/sessions/{id}/files";
  private static final String ARCHIVE = "/v1/sessions/{id}/archive";
  private static final String OCTETS = "application/octet-stream";

  /** The most of a refused upload's body that is read and dropped before the answer. */
  private static final long DRAIN_LIMIT = 16L * 1024 * 1024;

  private final SessionFiles files;
  private final HttpApi api;

  FileRoutes(SessionFiles files, HttpApi api) {
    this.files = files;
    this.api = api;
  }

  void register(JavalinConfig config) {
    config.routes.put(FILES, this::write);
    config.routes.get(FILES, ctx -> send(ctx, files.read(id(ctx), path(ctx)), OCTETS));
    config.routes.delete(
        FILES, ctx -> api.json(ctx, 200, Map.of("deleted", files.delete(id(ctx), path(ctx)))));
    config.routes.get(FILES + "/list", ctx -> api.json(ctx, 200, files.list(id(ctx), path(ctx))));
    config.routes.get(
        ARCHIVE, ctx -> send(ctx, files.archive(id(ctx), path(ctx)), "application/x-tar"));
    config.routes.put(ARCHIVE, this::extract);
  }

  private void write(Context ctx) throws IOException {
    upload(ctx, (body, length) -> files.write(id(ctx), path(ctx), body, length));
  }

  private void extract(Context ctx) throws IOException {
    upload(ctx, (body, length) -> files.extract(id(ctx), path(ctx), body, length));
  }

  /** What an upload route does with the request's body and its declared length (-1 if none). */
  private interface Upload {
    Object run(InputStream body, long declaredLength) throws IOException;
  }

  /**
   * Runs {@code upload} and then reads what it left of the request's body, so that the client
   * finishes sending before the answer comes. A refused upload stops reading early; if the server
   * then closed the connection with bytes still unread, the kernel would answer the client's next
   * bytes with a reset, and the client could lose the error answer in it (or never see it, were it
   * still writing). The drain is bounded ({@link #DRAIN_LIMIT}): beyond it the connection is closed
   * as before. A client that asked to be told before sending ({@code Expect: 100-continue}) and
   * whose upload was refused before any of it was read is not drained: reading would invite the
   * body.
   */
  private void upload(Context ctx, Upload upload) throws IOException {
    long declared = ctx.req().getContentLengthLong();
    LazyBody body = new LazyBody(ctx.req());
    try {
      api.json(ctx, 200, upload.run(body, declared));
    } finally {
      boolean waiting =
          !body.opened() && "100-continue".equalsIgnoreCase(ctx.req().getHeader("Expect"));
      if (!waiting && declared <= DRAIN_LIMIT) {
        drain(body);
      }
    }
  }

  private static void drain(InputStream in) {
    byte[] buffer = new byte[16 * 1024];
    long left = DRAIN_LIMIT;
    try {
      int n;
      while (left > 0 && (n = in.read(buffer, 0, (int) Math.min(buffer.length, left))) > 0) {
        left -= n;
      }
    } catch (IOException e) {
      log.debug("draining a refused upload: {}", e.getMessage());
    }
  }

  /**
   * The request's body, opened at its first read: the servlet container answers {@code Expect:
   * 100-continue} as soon as the body is opened, so a route that refuses before reading must not
   * open it.
   */
  private static final class LazyBody extends InputStream {
    private final HttpServletRequest request;
    private @Nullable InputStream in;

    LazyBody(HttpServletRequest request) {
      this.request = request;
    }

    boolean opened() {
      return in != null;
    }

    private InputStream in() throws IOException {
      InputStream open = in;
      if (open == null) {
        open = request.getInputStream();
        in = open;
      }
      return open;
    }

    @Override
    public int read() throws IOException {
      return in().read();
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      return in().read(b, off, len);
    }

    @Override
    public int available() throws IOException {
      return in == null ? 0 : in.available();
    }
  }

  /** Streams {@code download} as the answer, with its length when it is known. */
  private static void send(Context ctx, FileDownload download, String contentType)
      throws IOException {
    try (download) {
      ctx.status(200).contentType(contentType);
      if (download.size() >= 0) {
        ctx.res().setContentLengthLong(download.size());
      }
      OutputStream out = ctx.res().getOutputStream();
      try {
        download.transferTo(out);
        out.flush();
      } catch (IOException e) {
        log.info("download of {} cut: {}", ctx.path(), e.getMessage());
        abort(ctx, e);
      }
    }
  }

  /**
   * Closes the connection under a committed answer, so that the client sees the transfer broken (a
   * chunked body without its last chunk, or fewer bytes than its length) rather than ended.
   */
  private static void abort(Context ctx, IOException cause) throws IOException {
    if (ctx.res() instanceof ServletApiResponse response) {
      response.getServletChannel().getEndPoint().close();
      return;
    }
    throw cause;
  }

  private static String id(Context ctx) {
    return ctx.pathParam("id");
  }

  private static String path(Context ctx) {
    String path = ctx.queryParam("path");
    return path == null ? "" : path;
  }
}
