package dev.box.sandbox.engine;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.MissingNode;
import dev.box.sandbox.BackendRuntime;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.SocketTimeoutException;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * A small HTTP/1.1 client for the Docker Engine API (and Podman's compatible API) over a Unix
 * socket: one connection per request, JSON bodies, and hijacked connections for exec streams.
 *
 * <p>Request data reaches the engine only as JSON in a request body or as a URL-encoded path
 * segment; nothing is given to a shell or put on a command line.
 *
 * <p>Its {@link EngineThreads} enforce deadlines and run the streams and exit polls of the
 * processes it starts; {@link #close()} shuts them down when the client created them.
 */
public final class EngineClient implements AutoCloseable {
  /** The API version Box speaks: Docker 20.10 and Podman 4 both serve it. */
  public static final String API = "/v1.41";

  private static final ObjectMapper JSON = new ObjectMapper();

  private final UnixDomainSocketAddress address;
  private final EngineThreads threads;
  private final boolean ownsThreads;

  /**
   * A client with threads of its own, made by {@code runtime}, which {@link #close()} shuts down.
   */
  public EngineClient(Path socket, BackendRuntime runtime) {
    this(socket, EngineThreads.of(runtime), true);
  }

  /** A client on the caller's threads, which {@link #close()} leaves alone. */
  public EngineClient(Path socket, EngineThreads threads) {
    this(socket, threads, false);
  }

  private EngineClient(Path socket, EngineThreads threads, boolean ownsThreads) {
    this.address = UnixDomainSocketAddress.of(socket);
    this.threads = threads;
    this.ownsThreads = ownsThreads;
  }

  /** The threads of this client and of the processes it starts. */
  public EngineThreads threads() {
    return threads;
  }

  /** Shuts down the threads this client created; connections are per request. */
  @Override
  public void close() {
    if (ownsThreads) {
      threads.close();
    }
  }

  /** An answer: its status and its body. */
  public record Response(int status, byte[] body) {
    /** The body as JSON, or a missing node when it is not JSON. */
    public JsonNode json() {
      try {
        JsonNode node = JSON.readTree(body);
        return node == null ? MissingNode.getInstance() : node;
      } catch (IOException e) {
        return MissingNode.getInstance();
      }
    }

    /** The engine's error message, or the raw body. */
    public String message() {
      JsonNode message = json().path("message");
      String text =
          message.isTextual() ? message.asText() : new String(body, StandardCharsets.UTF_8).strip();
      return text.length() > 500 ? text.substring(0, 500) : text;
    }

    public boolean ok() {
      return status >= 200 && status < 300;
    }
  }

  /**
   * Sends one request and reads the whole answer.
   *
   * @param body a JSON body, or null for none
   * @param timeout how long the whole exchange may take
   * @throws IOException when the engine cannot be reached, does not answer in time or answers
   *     something that is not well-formed HTTP/1.1
   */
  public Response call(String method, String path, @Nullable Object body, Duration timeout)
      throws IOException {
    SocketChannel channel = SocketChannel.open(address);
    AtomicBoolean expired = new AtomicBoolean();
    ScheduledFuture<?> deadline = closeAfter(channel, timeout, expired);
    try (channel) {
      writeRequest(channel, method, path, body, false);
      HttpReader answer = new HttpReader(Channels.newInputStream(channel));
      HttpReader.Head head = answer.readHead();
      return new Response(head.status(), answer.readBody(head));
    } catch (IOException e) {
      if (expired.get()) {
        throw new SocketTimeoutException(
            method + " " + path + " got no answer within " + timeout.toSeconds() + " s");
      }
      throw e;
    } finally {
      deadline.cancel(false);
    }
  }

  /**
   * Sends a GET and returns its answer's body as a stream read as it arrives, for an answer too
   * large to hold (an exported file system); closing the stream closes the connection.
   *
   * @param timeout how long the whole exchange may take, reading the body included: the connection
   *     is closed then, and the read under way fails
   * @throws IOException also when the engine answers with an error (its message)
   */
  public InputStream download(String path, Duration timeout) throws IOException {
    SocketChannel channel = SocketChannel.open(address);
    ScheduledFuture<?> deadline = closeAfter(channel, timeout, new AtomicBoolean());
    try {
      writeRequest(channel, "GET", path, null, false);
      HttpReader answer = new HttpReader(Channels.newInputStream(channel));
      HttpReader.Head head = answer.readHead();
      if (head.status() < 200 || head.status() >= 300) {
        throw engineError(
            head.status(), new Response(head.status(), answer.readBody(head)).message());
      }
      return new FilterInputStream(answer.bodyStream(head)) {
        @Override
        public void close() throws IOException {
          deadline.cancel(false);
          channel.close();
        }
      };
    } catch (IOException | RuntimeException e) {
      deadline.cancel(false);
      channel.close();
      throw e;
    }
  }

  /**
   * Sends a request that upgrades the connection to a raw stream ({@code POST /exec/{id}/start}),
   * and returns the connection positioned at the first byte of the stream.
   *
   * @throws IOException also when the engine answers with an error instead of upgrading
   */
  public Hijacked hijack(String path, Object body, Duration timeout) throws IOException {
    SocketChannel channel = SocketChannel.open(address);
    ScheduledFuture<?> deadline = closeAfter(channel, timeout, new AtomicBoolean());
    try {
      writeRequest(channel, "POST", path, body, true);
      HttpReader answer = new HttpReader(Channels.newInputStream(channel));
      HttpReader.Head head = answer.readHead();
      if (head.status() != 101 && head.status() != 200) {
        Response error = new Response(head.status(), answer.readBody(head));
        channel.close();
        throw engineError(head.status(), error.message());
      }
      return new Hijacked(channel, answer.stream());
    } catch (IOException | RuntimeException e) {
      channel.close();
      throw e;
    } finally {
      deadline.cancel(false);
    }
  }

  /**
   * A connection handed over to a raw stream.
   *
   * @param in the stream, starting at its first byte: it holds what was read past the answer's head
   *     already, so read it rather than the channel
   */
  public record Hijacked(SocketChannel channel, InputStream in) {}

  /** Closes {@code channel} when {@code timeout} passes, setting {@code expired} first. */
  private ScheduledFuture<?> closeAfter(
      SocketChannel channel, Duration timeout, AtomicBoolean expired) {
    return threads
        .deadlines()
        .schedule(
            () -> {
              expired.set(true);
              try {
                channel.close();
              } catch (IOException e) {
                // Closing is all that is wanted.
              }
            },
            timeout.toMillis(),
            TimeUnit.MILLISECONDS);
  }

  private static void writeRequest(
      SocketChannel channel, String method, String path, @Nullable Object body, boolean upgrade)
      throws IOException {
    byte[] payload = body == null ? new byte[0] : JSON.writeValueAsBytes(body);
    StringBuilder head = new StringBuilder();
    head.append(method).append(' ').append(API).append(path).append(" HTTP/1.1\r\n");
    head.append("Host: docker\r\n");
    head.append("User-Agent: box\r\n");
    if (body != null) {
      head.append("Content-Type: application/json\r\n");
    }
    head.append("Content-Length: ").append(payload.length).append("\r\n");
    head.append(upgrade ? "Connection: Upgrade\r\nUpgrade: tcp\r\n" : "Connection: close\r\n");
    head.append("\r\n");
    OutputStream out = Channels.newOutputStream(channel);
    byte[] headBytes = head.toString().getBytes(StandardCharsets.US_ASCII);
    byte[] request = new byte[headBytes.length + payload.length];
    System.arraycopy(headBytes, 0, request, 0, headBytes.length);
    System.arraycopy(payload, 0, request, headBytes.length, payload.length);
    out.write(request);
    out.flush();
  }

  /** An error answer of the engine, as the exception callers report. */
  public static IOException engineError(int status, String message) {
    return new IOException("the engine answered " + status + ": " + message);
  }
}
