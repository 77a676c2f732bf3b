package dev.box.langbot;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.box.api.BoxErrorCode;
import dev.box.api.BoxRuntimeUnavailableException;
import java.io.IOException;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One control channel, independent of its transport: takes incoming text messages, runs each
 * request on its own virtual thread through an {@link ActionHandler}, and sends the responses (and
 * its own requests, such as {@code __ping}) through a {@link Sender}. At most {@value
 * #MAX_IN_FLIGHT} requests run at once; beyond that a request is answered with the busy error.
 */
public final class ControlConnection implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(ControlConnection.class);

  /** The most requests one connection runs at once. */
  public static final int MAX_IN_FLIGHT = 128;

  private static final String BUSY =
      ErrorRendering.render(
          new ActionError(
              BoxErrorCode.CAPACITY_EXCEEDED,
              "RuntimeError",
              "Runtime connection is busy (max " + MAX_IN_FLIGHT + " concurrent actions)"));

  /** Where outgoing messages go; called from several threads, one message at a time. */
  @FunctionalInterface
  public interface Sender {
    /** Sends one complete JSON message. */
    void send(String message) throws IOException;
  }

  private final ActionHandler handler;
  private final Sender sender;
  private final ObjectMapper mapper;
  private final ExecutorService workers = Executors.newVirtualThreadPerTaskExecutor();
  private final ReentrantLock sendLock = new ReentrantLock();
  private final AtomicInteger inFlight = new AtomicInteger();
  private final AtomicInteger nextSeq = new AtomicInteger(1);
  private final Map<Integer, CompletableFuture<JsonNode>> pending = new ConcurrentHashMap<>();

  /** A connection answering through {@code handler} and writing to {@code sender}. */
  public ControlConnection(ActionHandler handler, Sender sender, ObjectMapper mapper) {
    this.handler = handler;
    this.sender = sender;
    this.mapper = mapper;
  }

  /** Handles one incoming message; malformed ones are logged and dropped. Never blocks on work. */
  public void onText(String text) {
    JsonNode message;
    try {
      message = mapper.readTree(text);
    } catch (JsonProcessingException e) {
      log.warn("ignoring malformed control message: {}", e.getOriginalMessage());
      return;
    }
    if (!(message instanceof ObjectNode object)) {
      log.warn("ignoring control message that is not a JSON object");
      return;
    }
    if (object.has("code")) {
      onResponse(object);
    } else if (object.path("action").isTextual()) {
      onRequest(object);
    } else {
      log.warn("ignoring control message with neither action nor code");
    }
  }

  /**
   * Sends a request of the runtime's own, such as {@code __ping}; the future completes with the
   * response's {@code data}, or exceptionally with an {@link ActionError} for an error response.
   */
  public CompletableFuture<JsonNode> call(String action, JsonNode data) {
    int seq = nextSeq.getAndIncrement();
    CompletableFuture<JsonNode> answer = new CompletableFuture<>();
    pending.put(seq, answer);
    ObjectNode request = mapper.createObjectNode();
    request.put("seq_id", seq);
    request.put("action", action);
    request.set("data", data);
    if (!send(request)) {
      pending.remove(seq);
      answer.completeExceptionally(new IOException("control channel closed"));
    }
    return answer;
  }

  /** How many requests run now. */
  public int inFlight() {
    return inFlight.get();
  }

  /** Stops running requests and fails the runtime's own pending calls. */
  @Override
  public void close() {
    workers.shutdownNow();
    pending.values().forEach(f -> f.completeExceptionally(new IOException("connection closed")));
    pending.clear();
  }

  private void onRequest(ObjectNode request) {
    JsonNode seq = request.path("seq_id");
    String action = request.path("action").asText();
    if (inFlight.incrementAndGet() > MAX_IN_FLIGHT) {
      inFlight.decrementAndGet();
      send(error(seq, BUSY));
      return;
    }
    try {
      workers.execute(() -> run(seq, action, request));
    } catch (RejectedExecutionException e) {
      // Closed: LangBot's client waits for an answer to every request, so this one gets an error.
      inFlight.decrementAndGet();
      send(
          error(
              seq,
              ErrorRendering.render(
                  new BoxRuntimeUnavailableException("the control connection is closed"))));
    }
  }

  private void run(JsonNode seq, String action, ObjectNode request) {
    ObjectNode answer;
    try {
      JsonNode data = request.path("data");
      JsonNode context = request.get("context");
      JsonNode result =
          handler.handle(action, data.isObject() ? data : mapper.createObjectNode(), context);
      answer = response(seq, 0, "success", result);
    } catch (Exception e) {
      answer = error(seq, ErrorRendering.render(e));
    } finally {
      inFlight.decrementAndGet();
    }
    send(answer);
  }

  private void onResponse(ObjectNode response) {
    CompletableFuture<JsonNode> answer = pending.remove(response.path("seq_id").asInt(-1));
    if (answer == null) {
      log.debug("dropping a response nobody waits for: seq_id={}", response.path("seq_id"));
      return;
    }
    if (response.path("code").asInt(1) == 0) {
      answer.complete(response.path("data"));
    } else {
      answer.completeExceptionally(new ActionError("BoxError", response.path("message").asText()));
    }
  }

  private ObjectNode error(JsonNode seq, String message) {
    return response(seq, 1, message, mapper.createObjectNode());
  }

  private ObjectNode response(JsonNode seq, int code, String message, @Nullable JsonNode data) {
    ObjectNode response = mapper.createObjectNode();
    response.set("seq_id", seq.isMissingNode() ? mapper.nullNode() : seq);
    response.put("code", code);
    response.put("message", message);
    response.set("data", data == null ? mapper.createObjectNode() : data);
    response.put("chunk_status", "end");
    return response;
  }

  private boolean send(ObjectNode message) {
    String text;
    try {
      text = mapper.writeValueAsString(message);
    } catch (JsonProcessingException e) {
      log.error("cannot serialise a control message", e);
      return false;
    }
    sendLock.lock();
    try {
      sender.send(text);
      return true;
    } catch (IOException | RuntimeException e) {
      log.warn("cannot send a control message: {}", e.toString());
      return false;
    } finally {
      sendLock.unlock();
    }
  }
}
