package dev.box.server.http;

import dev.box.core.files.FileDownload;
import dev.box.core.session.SessionFiles;
import io.javalin.config.JavalinConfig;
import io.javalin.http.Context;
import java.io.IOException;
import java.io.OutputStream;
import java.util.Map;
import org.eclipse.jetty.ee10.servlet.ServletApiResponse;
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
    api.json(
        ctx,
        200,
        files.write(
            id(ctx), path(ctx), ctx.req().getInputStream(), ctx.req().getContentLengthLong()));
  }

  private void extract(Context ctx) throws IOException {
    api.json(
        ctx,
        200,
        files.extract(
            id(ctx), path(ctx), ctx.req().getInputStream(), ctx.req().getContentLengthLong()));
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
