package dev.box.server.http;

import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.core.backend.SharedSessions;
import dev.box.core.session.SessionManager;
import io.javalin.http.Context;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The other live replicas of this server's tenant, where the backend shares its sessions among
 * servers ({@link SharedSessions#peers}), and the requests this server sends them for what only one
 * of them holds (its managed processes).
 *
 * <p>A request goes only to a URL a replica's lease advertises, never to one a request names: the
 * path is built here from the route's parameters, each encoded as one segment, after that URL's
 * scheme and authority. It carries this server's control token (replicas of one tenant share it)
 * and {@value #FORWARDED}, which marks it forwarded: a replica serves a forwarded request from what
 * it holds itself, and never forwards it again.
 */
final class Peers {
  private static final Logger log = LoggerFactory.getLogger(Peers.class);

  /** The header that marks a request one replica sends another. */
  static final String FORWARDED = "X-Box-Forwarded";

  private static final Duration TIMEOUT = Duration.ofSeconds(10);

  private final SessionManager sessions;
  private final @Nullable String token;
  private @Nullable HttpClient client;

  /**
   * @param sessions the sessions, whose backend names the other replicas
   * @param token the control token sent to them, or null when this server's API is open
   */
  Peers(SessionManager sessions, @Nullable String token) {
    this.sessions = sessions;
    this.token = token;
  }

  /** Whether {@code ctx} is a request another replica forwarded. */
  static boolean forwarded(Context ctx) {
    return ctx.header(FORWARDED) != null;
  }

  /** The path of {@code segments} under {@code /v1/sessions}, each encoded as one segment. */
  static String sessionPath(String... segments) {
    StringBuilder path = new StringBuilder("/v1/sessions");
    for (String segment : segments) {
      path.append('/')
          .append(URLEncoder.encode(segment, StandardCharsets.UTF_8).replace("+", "%20"));
    }
    return path.toString();
  }

  /**
   * The other live replicas, those that advertise a URL; none when the backend keeps its sessions
   * for this server alone.
   */
  Found urls() {
    SharedSessions shared = sessions.sharedSessions();
    if (shared == null) {
      return new Found(List.of(), List.of());
    }
    List<URI> urls = new ArrayList<>();
    List<String> silent = new ArrayList<>();
    for (SharedSessions.Peer peer : shared.peers()) {
      if (peer.url() == null) {
        silent.add(peer.name());
      } else {
        urls.add(peer.url());
      }
    }
    return new Found(urls, silent);
  }

  /**
   * The live replicas found.
   *
   * @param urls where those that advertise a URL are reached
   * @param silent those that advertise none ({@code replica_url} unset where it cannot default)
   */
  record Found(List<URI> urls, List<String> silent) {
    /** Refuses when a replica advertises no URL: what it holds cannot be asked for. */
    void requireAllReachable(String what) {
      if (!silent.isEmpty()) {
        throw new BoxException(
            BoxErrorCode.RUNTIME_UNAVAILABLE,
            what
                + " is not on this replica, and "
                + silent.size()
                + " other replica(s) advertise no replica_url to ask ("
                + String.join(", ", silent)
                + "): set replica_url (BOX_REPLICA_URL) on every replica");
      }
    }
  }

  /** A forwarded request to {@code path} of {@code peer}. */
  HttpRequest.Builder request(URI peer, String path) {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(at(peer, peer.getScheme(), path, null))
            .timeout(TIMEOUT)
            .header(FORWARDED, "1");
    if (token != null) {
      request.header("Authorization", "Bearer " + token);
    }
    return request;
  }

  /** Sends {@code request}, answered as text. */
  HttpResponse<String> send(HttpRequest request) throws IOException {
    try {
      return client().send(request, HttpResponse.BodyHandlers.ofString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted", e);
    }
  }

  /**
   * Sends {@code request} to a replica that may be going away: null (logged) when it does not
   * answer, so that a lookup asks the others.
   */
  @Nullable HttpResponse<String> ask(HttpRequest request) {
    try {
      return send(request);
    } catch (IOException e) {
      log.warn("replica {} does not answer: {}", request.uri().getAuthority(), e.toString());
      return null;
    }
  }

  /** A builder of a forwarded WebSocket to another replica. */
  WebSocket.Builder webSocket() {
    WebSocket.Builder builder =
        client().newWebSocketBuilder().connectTimeout(TIMEOUT).header(FORWARDED, "1");
    if (token != null) {
      builder.header("Authorization", "Bearer " + token);
    }
    return builder;
  }

  /**
   * The client of the requests to the other replicas, built on their first: building one sets up
   * the JDK's TLS (its providers and trusted certificates, some 500 classes and a megabyte of
   * heap), which a server whose backend shares no sessions never needs.
   */
  private synchronized HttpClient client() {
    HttpClient built = client;
    if (built == null) {
      built =
          HttpClient.newBuilder()
              .connectTimeout(TIMEOUT)
              .followRedirects(HttpClient.Redirect.NEVER)
              .build();
      client = built;
    }
    return built;
  }

  /** The WebSocket URI of {@code path} (with {@code query}) on {@code peer}. */
  static URI webSocketUri(URI peer, String path, @Nullable String query) {
    return at(peer, peer.getScheme().equals("https") ? "wss" : "ws", path, query);
  }

  /** {@code path} and {@code query} under {@code peer}'s authority: nothing else of a request. */
  private static URI at(URI peer, String scheme, String path, @Nullable String query) {
    return URI.create(
        scheme
            + "://"
            + peer.getRawAuthority()
            + path
            + (query == null || query.isEmpty() ? "" : "?" + query));
  }
}
