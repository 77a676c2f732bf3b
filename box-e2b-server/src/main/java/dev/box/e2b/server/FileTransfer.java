package dev.box.e2b.server;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.box.api.BoxFileWritten;
import dev.box.core.files.FileDownload;
import dev.box.core.session.SessionFiles;
import io.javalin.http.Context;
import jakarta.servlet.MultipartConfigElement;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.Part;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.GZIPInputStream;

/**
 * envd's {@code /files}: a download of one file, binary-exact, and an upload of one file or many,
 * as {@code multipart/form-data} (each part's file name its path) or as the raw body ({@code
 * application/octet-stream}, gzip-encoded or not) to {@code ?path=}. Every write goes through
 * {@link SessionFiles}, which bounds it by the server's file limit and resolves the path in the
 * sandbox; a relative path starts at the user's home.
 */
final class FileTransfer {
  private static final String MULTIPART_CONFIG = "org.eclipse.jetty.multipartConfig";
  private static final Pattern FILENAME = Pattern.compile("filename=\"([^\"]*)\"");
  private static final int MAX_PARTS = 1000;

  private final SessionFiles files;
  private final EnvdCaller caller;
  private final ObjectMapper mapper;
  private final E2bAnswers answers;
  private final Path spool;

  /** Transfers through {@code files}, spooling multipart uploads in {@code spool}. */
  FileTransfer(SessionFiles files, EnvdCaller caller, E2bAnswers answers, Path spool) {
    this.files = files;
    this.caller = caller;
    this.answers = answers;
    this.mapper = answers.mapper();
    this.spool = spool;
  }

  /** {@code GET /files?path=}: the file's bytes. */
  void download(Context ctx) throws IOException {
    E2bSandbox sandbox = caller.sandbox(ctx);
    EnvdCaller.checkUser(ctx.queryParam("username"));
    try (FileDownload download = files.read(sandbox.sessionId(), ctx.queryParam("path"))) {
      ctx.status(200).contentType("application/octet-stream");
      if (download.size() >= 0) {
        ctx.res().setContentLengthLong(download.size());
      }
      OutputStream out = ctx.res().getOutputStream();
      download.transferTo(out);
      out.flush();
    }
  }

  /** {@code POST /files}: writes each file and answers their entries. */
  void upload(Context ctx) throws IOException {
    E2bSandbox sandbox = caller.sandbox(ctx);
    EnvdCaller.checkUser(ctx.queryParam("username"));
    String path = ctx.queryParam("path");
    String type = ctx.contentType();
    ArrayNode written = mapper.createArrayNode();
    if (type != null && type.toLowerCase(Locale.ROOT).startsWith("multipart/form-data")) {
      for (Part part : parts(ctx)) {
        String target = path != null ? path : filename(part);
        try (InputStream in = part.getInputStream()) {
          written.add(entry(files.write(sandbox.sessionId(), target, in, part.getSize())));
        } finally {
          part.delete();
        }
      }
    } else {
      written.add(entry(files.write(sandbox.sessionId(), path, body(ctx), length(ctx))));
    }
    answers.json(ctx, 200, written);
  }

  private List<Part> parts(Context ctx) throws IOException {
    long max = files.limits().maxFileBytes();
    // The parts are spooled on the server's disk before they are written: all of them together
    // are bounded as an archive upload is.
    long all = Math.max(max, files.limits().maxArchiveBytes());
    Files.createDirectories(spool);
    ctx.req()
        .setAttribute(
            MULTIPART_CONFIG, new MultipartConfigElement(spool.toString(), max, all, 1024 * 1024));
    List<Part> parts = new ArrayList<>();
    for (Part part : readParts(ctx)) {
      if (part.getName().equals("file")) {
        parts.add(part);
      }
    }
    if (parts.isEmpty() || parts.size() > MAX_PARTS) {
      throw ApiError.badRequest("the upload must have 1 to " + MAX_PARTS + " parts named 'file'");
    }
    if (parts.size() > 1 && ctx.queryParam("path") != null) {
      throw ApiError.badRequest("?path= names one file; several parts each name their own");
    }
    return parts;
  }

  /** The parts of the body, each bounded by the file limit; a malformed body is refused. */
  private static Collection<Part> readParts(Context ctx) throws IOException {
    try {
      return ctx.req().getParts();
    } catch (ServletException | IllegalStateException e) {
      String reason = String.valueOf(e.getMessage());
      throw new ApiError(
          reason.toLowerCase(Locale.ROOT).contains("max") ? 413 : 400,
          "the multipart body is refused: " + reason);
    }
  }

  /** The path a part names in its {@code Content-Disposition} file name. */
  private static String filename(Part part) {
    String disposition = part.getHeader("Content-Disposition");
    Matcher matcher = FILENAME.matcher(disposition == null ? "" : disposition);
    if (!matcher.find() || matcher.group(1).isEmpty()) {
      throw ApiError.badRequest("a part names no file: give ?path= or a filename");
    }
    return matcher.group(1);
  }

  private static InputStream body(Context ctx) throws IOException {
    InputStream in = ctx.req().getInputStream();
    String encoding = ctx.header("Content-Encoding");
    if (encoding == null || encoding.equalsIgnoreCase("identity")) {
      return in;
    }
    if (encoding.equalsIgnoreCase("gzip")) {
      return new GZIPInputStream(in);
    }
    throw ApiError.badRequest("Content-Encoding " + encoding + " is not supported (gzip is)");
  }

  /** The body's declared length when it is what is written (not gzip), else -1. */
  private static long length(Context ctx) {
    return ctx.header("Content-Encoding") == null ? ctx.req().getContentLengthLong() : -1;
  }

  private ObjectNode entry(BoxFileWritten file) {
    ObjectNode node = mapper.createObjectNode();
    String path = file.path();
    node.put("name", path.substring(path.lastIndexOf('/') + 1));
    node.put("type", "file");
    node.put("path", path);
    return node;
  }
}
