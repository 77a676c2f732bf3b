package dev.box.mcp;

import dev.box.api.BoxManagedProcessSpec;
import dev.box.client.AttachOptions;
import dev.box.client.BoxClient;
import dev.box.client.ProcessAttachment;
import dev.box.client.ProcessListener;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpClientTransport;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.JSONRPCMessage;
import io.modelcontextprotocol.spec.McpTransportException;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * An MCP client transport to a stdio MCP server that runs as a managed process in a Box session:
 * each JSON-RPC message goes to the process's stdin as one line, and each line of its stdout is
 * parsed as one JSON-RPC message, over the Box stdio relay.
 *
 * <p>Use it with the SDK's client like any other transport:
 *
 * <pre>{@code
 * box.startProcess("agent-1", BoxManagedProcessSpec.of("node", "/opt/mcp/server.js"));
 * McpSyncClient mcp =
 *     McpClient.sync(BoxMcpClientTransport.builder(box, "agent-1").build()).build();
 * mcp.initialize();
 * }</pre>
 *
 * <p>The transport attaches to a process that is already running; it neither starts nor stops it
 * (the process belongs to the session, and outlives the transport). When the connection drops, it
 * reconnects and resumes stdout at the byte after the last one it read, so no response is lost and
 * none is read twice; a message being sent at the moment of the drop may be lost (the server may
 * have read it), and its request then times out. Stdout lines that are not JSON-RPC messages are
 * logged and skipped. Failures it cannot recover from (the process exited, reconnecting failed) go
 * to the {@linkplain #setExceptionHandler exception handler} the SDK's client installs.
 *
 * <p>A transport connects once; the SDK's client calls {@link #connect} itself.
 */
public final class BoxMcpClientTransport implements McpClientTransport {
  private static final Logger log = LoggerFactory.getLogger(BoxMcpClientTransport.class);
  private static final int QUOTED_LINE = 200;

  private final BoxClient client;
  private final String sessionId;
  private final String processId;
  private final McpJsonMapper jsonMapper;
  private final AttachOptions options;
  private final AtomicBoolean connected = new AtomicBoolean();
  private final StdinLines stdin = new StdinLines();
  private volatile boolean closing;
  private volatile Consumer<Throwable> exceptionHandler = failure -> {};

  private BoxMcpClientTransport(Builder builder, McpJsonMapper jsonMapper) {
    this.client = builder.client;
    this.sessionId = builder.sessionId;
    this.processId = builder.processId;
    this.jsonMapper = jsonMapper;
    this.options = builder.options;
  }

  /**
   * A builder of a transport to the managed process {@code "default"} of the session {@code
   * sessionId} on the server {@code client} talks to.
   */
  public static Builder builder(BoxClient client, String sessionId) {
    return new Builder(client, sessionId);
  }

  /** The session of the MCP server's process. */
  public String sessionId() {
    return sessionId;
  }

  /** The id of the MCP server's process within its session. */
  public String processId() {
    return processId;
  }

  /**
   * Attaches to the process's stdio and routes each message read from stdout to {@code handler}.
   * The returned Mono completes once the server accepted the connection, and fails with the
   * server's {@link dev.box.api.BoxException} when it refused it (no such process, not running).
   */
  @Override
  public Mono<Void> connect(Function<Mono<JSONRPCMessage>, Mono<JSONRPCMessage>> handler) {
    return Mono.<Void>fromRunnable(
            () -> {
              if (!connected.compareAndSet(false, true)) {
                throw new IllegalStateException(
                    "this transport is connected already; create a new one to connect again");
              }
              try {
                stdin.attached(client.attach(sessionId, processId, new Inbound(handler), options));
              } catch (RuntimeException e) {
                stdin.unusable(e);
                throw e;
              }
            })
        .subscribeOn(Schedulers.boundedElastic());
  }

  /**
   * Writes {@code message} to the process's stdin as one line. The Mono completes when the line was
   * written to the connection; until the transport is connected, and while it reconnects, that
   * waits for the connection. It fails once the transport is closed or could not connect.
   */
  @Override
  public Mono<Void> sendMessage(JSONRPCMessage message) {
    return Mono.defer(
        () -> {
          String line;
          try {
            line = jsonMapper.writeValueAsString(message);
          } catch (IOException e) {
            return Mono.error(new McpTransportException("cannot serialise " + message, e));
          }
          // A raw line break can only be whitespace between JSON tokens; one line per message.
          return Mono.fromFuture(stdin.send(line.replace('\r', ' ').replace('\n', ' ')));
        });
  }

  /** Detaches from the process's stdio; the process keeps running. */
  @Override
  public Mono<Void> closeGracefully() {
    return Mono.<Void>fromRunnable(
            () -> {
              closing = true;
              ProcessAttachment current =
                  stdin.unusable(new McpTransportException("the transport is closed"));
              if (current != null) {
                current.close();
              }
            })
        .subscribeOn(Schedulers.boundedElastic());
  }

  @Override
  public <T> T unmarshalFrom(Object data, TypeRef<T> typeRef) {
    return jsonMapper.convertValue(data, typeRef);
  }

  /** Receives the failures the transport cannot recover from; the SDK's client installs one. */
  @Override
  public void setExceptionHandler(Consumer<Throwable> handler) {
    this.exceptionHandler = handler;
  }

  private String describe() {
    return "managed process " + processId + " in session " + sessionId;
  }

  private void fail(McpTransportException failure) {
    if (closing) {
      return;
    }
    log.warn("{}", failure.getMessage(), failure.getCause());
    exceptionHandler.accept(failure);
  }

  /** Stdout lines in, JSON-RPC messages to the SDK's handler. */
  private final class Inbound implements ProcessListener {
    private final Function<Mono<JSONRPCMessage>, Mono<JSONRPCMessage>> handler;

    Inbound(Function<Mono<JSONRPCMessage>, Mono<JSONRPCMessage>> handler) {
      this.handler = handler;
    }

    @Override
    public void onStdoutLine(String line) {
      if (line.isBlank()) {
        return;
      }
      JSONRPCMessage message;
      try {
        message = McpSchema.deserializeJsonRpcMessage(jsonMapper, line);
      } catch (IOException | RuntimeException e) {
        log.warn(
            "skipped a stdout line of {} that is not a JSON-RPC message: {}",
            describe(),
            quote(line));
        return;
      }
      handler
          .apply(Mono.just(message))
          .subscribe(
              handled -> {},
              error -> log.warn("the MCP client failed to handle {}", message, error));
    }

    @Override
    public void onReconnect(long offset) {
      log.info("reconnected to {}; stdout resumes at byte {}", describe(), offset);
    }

    @Override
    public void onGap(long requested, long firstAvailable) {
      fail(
          new McpTransportException(
              "lost stdout bytes "
                  + requested
                  + " to "
                  + firstAvailable
                  + " of "
                  + describe()
                  + " (no longer buffered by the server); messages in them are lost"));
    }

    @Override
    public void onClose(int code, String reason) {
      fail(new McpTransportException("the stdio relay of " + describe() + " ended: " + reason));
    }

    @Override
    public void onFailure(Throwable failure) {
      fail(new McpTransportException("the stdio relay of " + describe() + " failed", failure));
    }

    private String quote(String line) {
      return line.length() <= QUOTED_LINE ? line : line.substring(0, QUOTED_LINE) + "...";
    }
  }

  /** Builds a {@link BoxMcpClientTransport}; the settings are checked as they are set. */
  public static final class Builder {
    private final BoxClient client;
    private final String sessionId;
    private String processId = BoxManagedProcessSpec.DEFAULT_PROCESS_ID;
    private @Nullable McpJsonMapper jsonMapper;
    private AttachOptions options = AttachOptions.defaults();

    private Builder(BoxClient client, String sessionId) {
      if (sessionId.isBlank()) {
        throw new IllegalArgumentException("the session id must not be blank");
      }
      this.client = client;
      this.sessionId = sessionId.strip();
    }

    /** Sets the id of the MCP server's process within the session; {@code "default"} if unset. */
    public Builder processId(String value) {
      if (value.isBlank()) {
        throw new IllegalArgumentException("the process id must not be blank");
      }
      processId = value.strip();
      return this;
    }

    /**
     * Sets the JSON mapper for messages; unset, the SDK's default ({@link
     * McpJsonDefaults#getMapper()}, the JSON binding on the class path).
     */
    public Builder jsonMapper(McpJsonMapper value) {
      jsonMapper = value;
      return this;
    }

    /**
     * Sets how the transport attaches: reconnect attempts, idle timeout, longest message. The
     * transport reads lines, so these options must deliver {@link AttachOptions.Delivery#LINES}.
     *
     * @throws IllegalArgumentException when {@code value} delivers bytes
     */
    public Builder attachOptions(AttachOptions value) {
      if (value.delivery() != AttachOptions.Delivery.LINES) {
        throw new IllegalArgumentException(
            "the MCP transport reads one message per line: attach options must deliver LINES, not "
                + value.delivery());
      }
      options = value;
      return this;
    }

    /** A transport with these settings; it connects when the MCP client calls {@code connect}. */
    public BoxMcpClientTransport build() {
      McpJsonMapper mapper = jsonMapper;
      return new BoxMcpClientTransport(this, mapper != null ? mapper : McpJsonDefaults.getMapper());
    }
  }
}
