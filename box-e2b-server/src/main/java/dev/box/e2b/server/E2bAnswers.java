package dev.box.e2b.server;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import io.javalin.http.Context;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one place where E2B's routes turn failures into answers: E2B's {@code {"code","message"}}
 * body on the control plane and envd's REST routes, Connect's error JSON on envd's RPCs. A client
 * mistake is a 4xx with the reason; anything unexpected is logged here and answered as a 500
 * without its details.
 */
final class E2bAnswers {
  private static final Logger log = LoggerFactory.getLogger(E2bAnswers.class);

  /** A route's work. */
  interface Action {
    void run(Context ctx) throws Exception;
  }

  /** A check before the work, which throws the refusal. */
  interface Check {
    void check(Context ctx);
  }

  private final ObjectMapper mapper;

  E2bAnswers(ObjectMapper mapper) {
    this.mapper = mapper;
  }

  /** Runs {@code check} then {@code action}, answering a failure of either in E2B's shape. */
  void control(Context ctx, Check check, Action action) {
    try {
      check.check(ctx);
      action.run(ctx);
    } catch (Exception e) {
      if (ctx.res().isCommitted()) {
        // A download cut after its first bytes: the connection ends short of the length sent.
        log.info("{} {} cut: {}", ctx.method(), ctx.path(), e.toString());
        return;
      }
      ApiError error = apiError(e, ctx);
      error(ctx, error.status(), error.getMessage());
    }
  }

  /** Runs {@code action}, answering a failure as Connect's error JSON. */
  void rpc(Context ctx, Action action) {
    try {
      action.run(ctx);
    } catch (Exception e) {
      ConnectError error = connectError(e, ctx);
      ObjectNode body = mapper.createObjectNode();
      body.put("code", error.code());
      body.put("message", error.getMessage());
      write(ctx, error.httpStatus(), body);
    }
  }

  /** The mapper of every JSON body of E2B's routes. */
  ObjectMapper mapper() {
    return mapper;
  }

  void json(Context ctx, int status, Object body) throws JsonProcessingException {
    ctx.status(status).contentType("application/json").result(mapper.writeValueAsString(body));
  }

  /** E2B's error body {@code {"code":status,"message":...}}. */
  void error(Context ctx, int status, String message) {
    ObjectNode body = mapper.createObjectNode();
    body.put("code", status);
    body.put("message", message);
    write(ctx, status, body);
  }

  private void write(Context ctx, int status, ObjectNode body) {
    try {
      json(ctx, status, body);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("an error body did not serialise", e);
    }
  }

  private static ApiError apiError(Exception e, Context ctx) {
    return switch (e) {
      case ApiError api -> api;
      case ConnectError connect -> new ApiError(connect.httpStatus(), connect.getMessage());
      case BoxException box ->
          new ApiError(box.code().httpStatus(), String.valueOf(box.getMessage()));
      case Bodies.TooLarge large -> new ApiError(413, String.valueOf(large.getMessage()));
      case JsonProcessingException json -> ApiError.badRequest("the body is not valid JSON");
      default -> {
        log.error("{} {} failed", ctx.method(), ctx.path(), e);
        yield new ApiError(500, "internal error");
      }
    };
  }

  /** The Connect error {@code e} is answered as; an unexpected one is logged here. */
  static ConnectError connectError(Exception e, Context ctx) {
    return switch (e) {
      case ConnectError connect -> connect;
      case ApiError api -> ConnectError.ofStatus(api.status(), api.getMessage());
      case BoxException box -> new ConnectError(code(box.code()), String.valueOf(box.getMessage()));
      case Bodies.TooLarge large ->
          ConnectError.invalidArgument(String.valueOf(large.getMessage()));
      case JsonProcessingException json ->
          ConnectError.invalidArgument("the request is not valid JSON");
      default -> {
        log.error("{} {} failed", ctx.method(), ctx.path(), e);
        yield new ConnectError("internal", "internal error");
      }
    };
  }

  /** Connect's code for a Box error. */
  private static String code(BoxErrorCode code) {
    return switch (code) {
      case VALIDATION_ERROR, FILE_TYPE_CONFLICT -> "invalid_argument";
      case UNAUTHORIZED -> "unauthenticated";
      case NOT_FOUND, SESSION_NOT_FOUND, MANAGED_PROCESS_NOT_FOUND, FILE_NOT_FOUND -> "not_found";
      case PERMISSION_DENIED, READ_ONLY -> "permission_denied";
      case PAYLOAD_TOO_LARGE, CAPACITY_EXCEEDED, STORAGE_FULL -> "resource_exhausted";
      case SESSION_CONFLICT, MANAGED_PROCESS_CONFLICT -> "already_exists";
      case BACKEND_UNAVAILABLE, RUNTIME_UNAVAILABLE -> "unavailable";
      case METHOD_NOT_ALLOWED -> "unimplemented";
      case OFFSET_GONE -> "out_of_range";
      case INTERNAL_ERROR -> "internal";
    };
  }
}
