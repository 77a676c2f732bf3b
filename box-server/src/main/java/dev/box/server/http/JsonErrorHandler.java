package dev.box.server.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.box.api.BoxError;
import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.BoxJson;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpHeaderValue;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;
import org.jspecify.annotations.Nullable;

/**
 * The answers Jetty gives itself, before a request reaches a route (a path it cannot decode such as
 * {@code %00}, a header it cannot parse), in Box's JSON error shape instead of Jetty's HTML page,
 * without a stack trace, and with {@code Connection: close} whenever Jetty will close the
 * connection after it, so that a keep-alive client knows not to send the next request on it.
 */
final class JsonErrorHandler extends ErrorHandler {
  private static final ObjectMapper JSON = BoxJson.newMapper();
  private static final int MAX_MESSAGE_CHARS = 200;

  /** Every method gets a body: Jetty's default gives none to DELETE, PUT and the rest. */
  @Override
  public boolean errorPageForMethod(String method) {
    return true;
  }

  @Override
  protected void generateResponse(
      Request request,
      Response response,
      int code,
      @Nullable String message,
      @Nullable Throwable cause,
      Callback callback) {
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
    if (cause != null || code == 400 || code >= 500) {
      // Jetty ends the connection after an error it raised itself while parsing; say so.
      response.getHeaders().put(HttpHeader.CONNECTION, HttpHeaderValue.CLOSE.asString());
    }
    response.write(true, ByteBuffer.wrap(body(code, message)), callback);
  }

  @Override
  public ByteBuffer badMessageError(
      int status, @Nullable String reason, HttpFields.Mutable fields) {
    fields.put(new HttpField(HttpHeader.CONTENT_TYPE, "application/json"));
    fields.put(HttpHeader.CONNECTION, HttpHeaderValue.CLOSE.asString());
    return ByteBuffer.wrap(body(status, reason));
  }

  private static byte[] body(int status, @Nullable String reason) {
    String detail = reason == null || reason.isBlank() ? "bad request" : reason.strip();
    if (detail.length() > MAX_MESSAGE_CHARS) {
      detail = detail.substring(0, MAX_MESSAGE_CHARS);
    }
    BoxException error =
        new BoxException(BoxErrorCode.forHttpStatus(status), "malformed request: " + detail);
    try {
      return JSON.writeValueAsBytes(BoxError.of(error));
    } catch (JsonProcessingException impossible) {
      return "{\"error\":{\"code\":\"validation_error\",\"message\":\"malformed request\"}}"
          .getBytes(StandardCharsets.UTF_8);
    }
  }
}
