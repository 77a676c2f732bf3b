package dev.box.server.http;

import io.javalin.http.Context;
import io.javalin.http.HttpResponseException;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;

/**
 * Refusing a WebSocket upgrade with an HTTP answer. The upgrade path of the HTTP framework renders
 * no errors itself, so the body is written and committed here, and the exception that follows stops
 * the upgrade.
 */
final class Upgrades {
  private Upgrades() {}

  /**
   * Answers {@code status} with {@code body} and ends the upgrade.
   *
   * @throws HttpResponseException always, once the answer is committed
   */
  static void refuse(Context ctx, int status, String contentType, byte[] body, String reason)
      throws IOException {
    HttpServletResponse response = ctx.res();
    response.setStatus(status);
    response.setContentType(contentType);
    response.setContentLength(body.length);
    response.getOutputStream().write(body);
    response.flushBuffer();
    throw new HttpResponseException(status, reason);
  }
}
