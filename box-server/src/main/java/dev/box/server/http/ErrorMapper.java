package dev.box.server.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.box.api.BoxError;
import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.BoxJson;
import dev.box.api.internal.RelayProtocol;
import dev.box.core.ErrorClassifier;
import dev.box.langbot.ErrorRendering;
import io.javalin.http.Context;
import io.javalin.http.HttpResponseException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.eclipse.jetty.websocket.api.Callback;
import org.eclipse.jetty.websocket.api.Session;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one place where failures become HTTP answers and relay closes. {@link ErrorClassifier}
 * decides which error a failure is (the HTTP framework's own errors keep the code of their status);
 * this class renders it: a REST answer {@code {"error": {"code", "message"}}} with the code's
 * status, the same before a WebSocket upgrade, LangBot's pre-upgrade answers in the shapes of
 * LangBot's own Box runtime, and the relay's close code and reason ({@link RelayProtocol}).
 */
final class ErrorMapper {
  private static final Logger log = LoggerFactory.getLogger(ErrorMapper.class);
  private static final ErrorClassifier CLASSIFIER =
      new ErrorClassifier("invalid request body", "a request");
  private static final ObjectMapper JSON = BoxJson.newMapper();
  private static final String JSON_TYPE = "application/json";

  private ErrorMapper() {}

  static BoxException toBoxException(Throwable failure) {
    if (failure instanceof HttpResponseException http) {
      return new BoxException(
          BoxErrorCode.forHttpStatus(http.getStatus()), String.valueOf(http.getMessage()));
    }
    return CLASSIFIER.classify(failure);
  }

  /** Answers a request with {@code error}'s status and JSON body. */
  static void answer(Context ctx, BoxException error) {
    try {
      ctx.status(error.code().httpStatus())
          .contentType(JSON_TYPE)
          .result(JSON.writeValueAsString(BoxError.of(error)));
    } catch (JsonProcessingException impossible) {
      log.error("cannot render the answer to {}", error.code(), impossible);
      BoxException internal = new BoxException(BoxErrorCode.INTERNAL_ERROR, "internal error");
      ctx.status(internal.code().httpStatus())
          .result(JSON.valueToTree(BoxError.of(internal)).toString());
    }
  }

  /** The JSON body of the answer to {@code error}, for a request no route handler serves. */
  static byte[] body(BoxException error) {
    try {
      return JSON.writeValueAsBytes(BoxError.of(error));
    } catch (JsonProcessingException impossible) {
      log.error("cannot render the answer to {}", error.code(), impossible);
      return "{\"error\":{\"code\":\"internal_error\",\"message\":\"internal error\"}}"
          .getBytes(StandardCharsets.UTF_8);
    }
  }

  /** Refuses a WebSocket upgrade with the answer a REST request would get for {@code failure}. */
  static void refuseUpgrade(Context ctx, Throwable failure) throws IOException {
    BoxException error = toBoxException(failure);
    Upgrades.refuse(
        ctx,
        error.code().httpStatus(),
        JSON_TYPE,
        JSON.writeValueAsBytes(BoxError.of(error)),
        String.valueOf(error.getMessage()));
  }

  /**
   * Refuses LangBot's relay upgrade as LangBot's own Box runtime does: 400 with {@code {"error":
   * {"code": "<ExceptionClass>", "message": ...}}}, whatever the error.
   */
  static void refuseLangBotUpgrade(Context ctx, Throwable failure) throws IOException {
    BoxException error = toBoxException(failure);
    Map<String, Object> body =
        Map.of(
            "error",
            Map.of(
                "code",
                ErrorRendering.className(error),
                "message",
                String.valueOf(error.getMessage())));
    Upgrades.refuse(
        ctx, 400, JSON_TYPE, JSON.writeValueAsBytes(body), String.valueOf(error.getMessage()));
  }

  /** Refuses one of LangBot's upgrades as its own runtime does: 401 text/plain "Unauthorized". */
  static void refuseLangBotUnauthorized(Context ctx) throws IOException {
    byte[] body = "Unauthorized".getBytes(StandardCharsets.UTF_8);
    Upgrades.refuse(ctx, 401, "text/plain; charset=utf-8", body, "Unauthorized");
  }

  /** Ends a relay for {@code failure}, with the close code and reason that say what failed. */
  static void closeRelay(Session socket, Throwable failure) {
    BoxException error = toBoxException(failure);
    if (socket.isOpen()) {
      socket.close(
          RelayProtocol.closeCode(error.code()), RelayProtocol.closeReason(error), Callback.NOOP);
    }
  }
}
