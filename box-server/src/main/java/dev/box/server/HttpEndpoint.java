package dev.box.server;

import io.javalin.Javalin;
import java.net.BindException;
import java.net.URI;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A server's HTTP API: the application, who may call it, and whether it listens on its port (a
 * server whose control channel runs over stdio may run without it).
 */
record HttpEndpoint(Javalin http, ApiAccess access, String host, boolean listening) {
  private static final Logger log = LoggerFactory.getLogger(HttpEndpoint.class);

  /**
   * Starts {@code http} on the host and port of {@code config}.
   *
   * @param portOptional whether a port that cannot be bound is only a warning
   * @throws IllegalStateException when the port cannot be bound and it is not optional
   */
  static HttpEndpoint listen(
      Javalin http, ApiAccess access, ServerConfig config, boolean portOptional) {
    try {
      startListening(http, config);
    } catch (IllegalStateException e) {
      if (!portOptional) {
        throw e;
      }
      log.warn("{}. Managed process WebSocket attach will be unavailable.", e.getMessage());
      return new HttpEndpoint(http, access, config.host(), false);
    }
    return new HttpEndpoint(http, access, config.host(), true);
  }

  private static void startListening(Javalin http, ServerConfig config) {
    try {
      http.start(config.host(), config.port());
    } catch (RuntimeException e) {
      for (Throwable t = e; t != null; t = t.getCause()) {
        if (t instanceof BindException bind) {
          throw new IllegalStateException(
              "cannot listen on " + config.host() + ":" + config.port() + ": " + bind.getMessage(),
              e);
        }
      }
      throw e;
    }
  }

  /** The port the API listens on. */
  int port() {
    return http.port();
  }

  /**
   * Where a client on this host reaches the API: its bound address, or loopback when it is bound to
   * every address; null when it does not listen.
   */
  @Nullable URI localUri() {
    if (!listening) {
      return null;
    }
    String local = host;
    if (local.isBlank() || local.equals("0.0.0.0") || local.equals("::") || local.equals("[::]")) {
      local = "127.0.0.1";
    } else if (local.contains(":") && !local.startsWith("[")) {
      local = "[" + local + "]";
    }
    return URI.create("http://" + local + ":" + port());
  }

  /** Stops accepting requests. */
  void stop() {
    http.stop();
  }
}
