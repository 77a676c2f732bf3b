package dev.box.server.ports;

import dev.box.core.backend.SandboxProcess;
import dev.box.core.session.ProcessManager;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Relays one HTTP/1.1 request to {@code 127.0.0.1:port} inside a session's sandbox and its answer
 * back, through a pipe process spawned in the sandbox for this request alone ({@link
 * ProcessManager#connectPort}): no network is involved, so it works with the sandbox's network off.
 * The pipe is killed when the exchange ends, whichever side ends it.
 *
 * <p>Bodies stream both ways through fixed buffers: the request body on a thread of its own while
 * the answer is read, each blocking write holding its reader back. An upgrade the server in the
 * sandbox accepts (101, as a WebSocket's) becomes a raw byte tunnel ({@link PortTunnel}) that keeps
 * the pipe.
 *
 * <p>Hop-by-hop fields are not relayed either way, nor Box's own credentials; the server in the
 * sandbox sees {@code Host: 127.0.0.1:port} (what a development server expects of a local request),
 * and the client's host and scheme in {@code X-Forwarded-Host} and {@code X-Forwarded-Proto}.
 */
public final class PortProxy {
  /** Fields that end at each hop (RFC 9110 7.6.1), never relayed. */
  private static final Set<String> HOP_BY_HOP =
      Set.of(
          "connection",
          "keep-alive",
          "proxy-connection",
          "proxy-authorization",
          "proxy-authenticate",
          "te",
          "trailer",
          "transfer-encoding",
          "upgrade");

  /** Fields Box sets itself toward the sandbox, or answers itself. */
  private static final Set<String> REPLACED =
      Set.of("host", "expect", "content-length", "x-forwarded-host", "x-forwarded-proto");

  private static final byte[] CRLF = {'\r', '\n'};

  /** How many interim (1xx) heads before the final one are skipped. */
  private static final int MAX_INTERIM = 8;

  private final ProcessManager processes;

  /** A proxy that spawns its pipes through {@code processes}. */
  public PortProxy(ProcessManager processes) {
    this.processes = processes;
  }

  /**
   * Relays {@code request} to {@code port} of session {@code sessionId} as {@code target} (a raw
   * path with its query), and the answer to {@code response}.
   *
   * @param credentials the request fields that carry Box's own credentials, lower case: not relayed
   * @throws dev.box.api.BoxException before anything was answered: the session or the backend
   *     refuses, or {@link PortUnreachable} when nothing answers on the port
   * @throws IOException when either side fails once the answer has begun (it is then aborted)
   */
  public void serve(
      String sessionId,
      int port,
      String target,
      Set<String> credentials,
      HttpServletRequest request,
      HttpServletResponse response)
      throws IOException {
    SandboxProcess pipe = processes.connectPort(sessionId, port);
    boolean handedOver = false;
    try {
      Thread.ofVirtual().name("box-port-stderr").start(() -> drain(pipe.stderr()));
      boolean upgrade = wantsUpgrade(request);
      OutputStream upstream = pipe.stdin();
      try {
        upstream.write(head(request, port, target, credentials, upgrade));
        upstream.flush();
        if (!upgrade) {
          sendBody(request, upstream);
        }
      } catch (IOException e) {
        // The pipe could not connect and ended: its answer (none) says so.
      }
      InputStream answer = new BufferedInputStream(pipe.stdout(), UpstreamBody.BUFFER);
      UpstreamHead head = finalHead(answer, port);
      if (upgrade && head.status() == 101) {
        response.setStatus(101);
        copyHeaders(head, response);
        response.setHeader("Connection", "Upgrade");
        response.setHeader("Upgrade", request.getHeader("Upgrade"));
        PortTunnel.install(request, pipe, answer);
        handedOver = true;
        return;
      }
      if (head.status() == 101) {
        throw new UpstreamHead.Malformed("it switched protocols unasked");
      }
      try {
        relay(request, response, head, answer);
      } catch (IOException e) {
        if (response.isCommitted()) {
          throw e;
        }
        throw new PortUnreachable(
            "the answer of the server on port " + port + " in the sandbox broke off: " + e);
      }
    } catch (UpstreamHead.Malformed e) {
      throw new PortUnreachable(
          "the server on port " + port + " in the sandbox answered no HTTP: " + e.getMessage());
    } finally {
      if (!handedOver) {
        pipe.killTree();
        pipe.release();
      }
    }
  }

  /** The first non-interim head; a 101 is final. */
  private static UpstreamHead finalHead(InputStream answer, int port) throws IOException {
    for (int interim = 0; interim <= MAX_INTERIM; interim++) {
      UpstreamHead head = UpstreamHead.read(answer);
      if (head == null) {
        throw new PortUnreachable(silent(port));
      }
      if (head.status() >= 200 || head.status() == 101) {
        return head;
      }
    }
    throw new UpstreamHead.Malformed("more than " + MAX_INTERIM + " interim answers");
  }

  private static String silent(int port) {
    return "nothing answers on port %d in the sandbox: no server listens there on 127.0.0.1, or it"
            .formatted(port)
        + " closed the connection without an answer";
  }

  private static void relay(
      HttpServletRequest request,
      HttpServletResponse response,
      UpstreamHead head,
      InputStream answer)
      throws IOException {
    response.setStatus(head.status());
    copyHeaders(head, response);
    boolean bodiless =
        request.getMethod().equals("HEAD") || head.status() == 204 || head.status() == 304;
    OutputStream out = response.getOutputStream();
    if (bodiless) {
      response.flushBuffer();
      return;
    }
    if (head.chunked()) {
      UpstreamBody.copyChunked(answer, out);
    } else if (head.contentLength() >= 0) {
      response.setContentLengthLong(head.contentLength());
      UpstreamBody.copyLength(answer, out, head.contentLength());
    } else {
      UpstreamBody.copyToEnd(answer, out);
    }
  }

  private static void copyHeaders(UpstreamHead head, HttpServletResponse response) {
    Set<String> skipped = hopByHop(head.values("Connection"));
    skipped.add("content-length");
    // The server sets its own.
    skipped.add("date");
    for (Map.Entry<String, String> field : head.headers()) {
      if (!skipped.contains(field.getKey().toLowerCase(Locale.ROOT))) {
        response.addHeader(field.getKey(), field.getValue());
      }
    }
  }

  /** The hop-by-hop fields, with those a {@code Connection} field names. */
  private static Set<String> hopByHop(List<String> connection) {
    Set<String> names = new HashSet<>(HOP_BY_HOP);
    for (String value : connection) {
      for (String name : value.split(",")) {
        names.add(name.strip().toLowerCase(Locale.ROOT));
      }
    }
    return names;
  }

  private static boolean wantsUpgrade(HttpServletRequest request) {
    String connection = String.join(",", Collections.list(request.getHeaders("Connection")));
    return request.getMethod().equals("GET")
        && request.getHeader("Upgrade") != null
        && hopByHop(List.of(connection)).contains("upgrade");
  }

  /** The request head toward the sandbox: one request, then the connection closes. */
  private static byte[] head(
      HttpServletRequest request,
      int port,
      String target,
      Set<String> credentials,
      boolean upgrade) {
    StringBuilder head = new StringBuilder();
    head.append(request.getMethod()).append(' ').append(target).append(" HTTP/1.1\r\n");
    head.append("Host: 127.0.0.1:").append(port).append("\r\n");
    Set<String> skipped = hopByHop(Collections.list(request.getHeaders("Connection")));
    skipped.addAll(REPLACED);
    skipped.addAll(credentials);
    for (String name : Collections.list(request.getHeaderNames())) {
      if (skipped.contains(name.toLowerCase(Locale.ROOT))) {
        continue;
      }
      for (String value : Collections.list(request.getHeaders(name))) {
        head.append(name).append(": ").append(value).append("\r\n");
      }
    }
    String host = request.getHeader("Host");
    if (host != null) {
      head.append("X-Forwarded-Host: ").append(host).append("\r\n");
    }
    head.append("X-Forwarded-Proto: ").append(request.getScheme()).append("\r\n");
    if (upgrade) {
      head.append("Connection: Upgrade\r\nUpgrade: ")
          .append(request.getHeader("Upgrade"))
          .append("\r\n");
    } else {
      head.append("Connection: close\r\n");
      long length = request.getContentLengthLong();
      if (length >= 0) {
        head.append("Content-Length: ").append(length).append("\r\n");
      } else if (request.getHeader("Transfer-Encoding") != null) {
        head.append("Transfer-Encoding: chunked\r\n");
      }
    }
    return head.append("\r\n").toString().getBytes(StandardCharsets.ISO_8859_1);
  }

  /**
   * Sends the request body on a thread of its own, chunked when its length is unknown, so that the
   * answer is read meanwhile (a server may answer before it has read the body).
   */
  private static void sendBody(HttpServletRequest request, OutputStream upstream)
      throws IOException {
    boolean chunked =
        request.getContentLengthLong() < 0 && request.getHeader("Transfer-Encoding") != null;
    InputStream in = request.getInputStream();
    Thread.ofVirtual()
        .name("box-port-request")
        .start(
            () -> {
              byte[] buffer = new byte[UpstreamBody.BUFFER];
              try {
                for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
                  if (n == 0) {
                    continue;
                  }
                  if (chunked) {
                    upstream.write(
                        (Integer.toHexString(n) + "\r\n").getBytes(StandardCharsets.US_ASCII));
                  }
                  upstream.write(buffer, 0, n);
                  if (chunked) {
                    upstream.write(CRLF);
                  }
                  upstream.flush();
                }
                if (chunked) {
                  upstream.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                  upstream.flush();
                }
              } catch (IOException e) {
                // The pipe ended (the server answered and closed), or the client went away.
              }
            });
  }

  /** Reads and drops the pipe's stderr, which says nothing the answer does not. */
  private static void drain(InputStream stderr) {
    byte[] buffer = new byte[4096];
    try (stderr) {
      while (stderr.read(buffer) >= 0) {
        // Dropped.
      }
    } catch (IOException e) {
      // The pipe is gone.
    }
  }
}
