package dev.box.server.http;

import dev.box.api.BoxValidationException;
import jakarta.servlet.Servlet;
import java.util.List;
import java.util.regex.Pattern;

/**
 * A servlet that a launcher adds to the server's HTTP port at one exact path, such as the MCP
 * endpoint {@code box serve} mounts at {@code /mcp}. It lets a module the server cannot depend on
 * serve on the same port without the server knowing what it is.
 *
 * <p>A mount sits behind the same control-token check as every route (a request without the token
 * is refused with 401 and the API's JSON error body before it reaches the servlet), may use
 * asynchronous processing, and is destroyed when the server stops.
 *
 * @param path the exact path it serves, as {@code /mcp}: segments of letters, digits, {@code -},
 *     {@code .}, {@code _} or {@code ~}, outside the paths the API owns
 * @param servlet what serves it
 */
public record HttpMount(String path, Servlet servlet) {
  private static final Pattern PATH = Pattern.compile("(/[A-Za-z0-9._~-]+)+");
  private static final List<String> RESERVED =
      List.of("/v1", "/healthz", "/readyz", "/rpc", "/e2b");

  /** Refuses a path that is not exact or that the API owns. */
  public HttpMount {
    if (!PATH.matcher(path).matches()) {
      throw new BoxValidationException(
          "mount path must be an exact path of plain segments, such as /mcp, not '" + path + "'");
    }
    for (String owned : RESERVED) {
      if (path.equals(owned) || path.startsWith(owned + "/")) {
        throw new BoxValidationException("mount path " + path + " is the API's own");
      }
    }
  }
}
