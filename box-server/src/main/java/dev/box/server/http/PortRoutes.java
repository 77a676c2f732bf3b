package dev.box.server.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.box.api.BoxCapabilities;
import dev.box.api.BoxException;
import dev.box.api.BoxValidationException;
import dev.box.core.session.SessionManager;
import dev.box.server.ports.PortPath;
import dev.box.server.ports.PortProxy;
import dev.box.server.ports.PortUnreachable;
import dev.box.server.ports.PreviewLinks;
import io.javalin.config.JavalinConfig;
import io.javalin.http.Context;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * A sandbox's ports through Box: every request under {@code /v1/sessions/{id}/ports/{port}/} (with
 * the control token) and under {@code /preview/<token>/} (with a link) relayed to the port by
 * {@link PortProxy}, and the link routes, {@code POST} and {@code DELETE} of {@code
 * .../ports/{port}/links}, which are Box's own.
 *
 * <p>The relay is a servlet filter ahead of the framework's routing, because it serves any method
 * and takes over upgrades (a WebSocket to the port is the port's, not one of Box's WebSocket
 * routes). Errors before the answer begins are the API's JSON errors.
 *
 * @param api the API, whose sessions and control-token check these are
 * @param links the preview links
 * @param proxy what relays to the ports
 */
record PortRoutes(HttpApi api, PreviewLinks links, PortProxy proxy) implements Filter {
  private static final String LINKS = "/v1/sessions/{id}/ports/{port}" + PortPath.LINKS;

  /** Box's credentials, never relayed to a port. */
  private static final Set<String> CREDENTIALS =
      Set.of("authorization", "x-langbot-box-control-token");

  /** A link carries no credential of Box's: the app's own Authorization passes. */
  private static final Set<String> LINK_CREDENTIALS = Set.of("x-langbot-box-control-token");

  /** The routes of {@code api}'s sessions, whose links {@code links} issues and checks. */
  static PortRoutes of(HttpApi api, PreviewLinks links) {
    return new PortRoutes(api, links, new PortProxy(api.sessions().processes()));
  }

  private SessionManager sessions() {
    return api.sessions();
  }

  void register(JavalinConfig config) {
    config.routes.post(LINKS, this::issue);
    config.routes.delete(LINKS, this::revoke);
  }

  @Override
  public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
      throws IOException, ServletException {
    HttpServletRequest http = (HttpServletRequest) request;
    HttpServletResponse answer = (HttpServletResponse) response;
    try {
      PortPath path = PortPath.parse(http.getRequestURI(), http.getQueryString());
      if (path == null || path.linkRoute(http.getMethod())) {
        chain.doFilter(request, response);
        return;
      }
      relay(path, http, answer);
    } catch (BoxException e) {
      if (answer.isCommitted()) {
        throw new IOException("the relay to the sandbox's port failed: " + e.getMessage(), e);
      }
      answer.reset();
      answer.setStatus(
          e instanceof PortUnreachable ? PortUnreachable.STATUS : e.code().httpStatus());
      answer.setContentType("application/json");
      answer.getOutputStream().write(ErrorMapper.body(e));
    }
  }

  private void relay(PortPath path, HttpServletRequest http, HttpServletResponse answer)
      throws IOException {
    String token = path.token();
    if (token == null) {
      api.authenticate(http.getRequestURI(), http::getHeader);
      String id = String.valueOf(path.sessionId());
      proxy.serve(id, PortPath.port(path.port()), path.target(), CREDENTIALS, http, answer);
      return;
    }
    PreviewLinks.Target target = links.check(token, id -> sessions().get(id).createdAt());
    if (path.bare()) {
      // Relative links of the page resolve under the link only with its trailing slash.
      answer.setStatus(308);
      answer.setHeader("Location", PreviewLinks.PREFIX + token + path.target());
      return;
    }
    proxy.serve(target.sessionId(), target.port(), path.target(), LINK_CREDENTIALS, http, answer);
  }

  /** {@code POST .../links} {@code {"ttl_sec": N}}: a new link, 201 {@code {url, expires_at}}. */
  private void issue(Context ctx) throws JsonProcessingException {
    String id = ctx.pathParam("id");
    int port = PortPath.port(ctx.pathParam("port"));
    Duration ttl = ttl(ctx.body());
    requirePorts();
    sessions().get(id);
    PreviewLinks.Link link = links.issue(id, port, ttl);
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("url", links.url(link, ctx.scheme() + "://" + ctx.host()));
    body.put("expires_at", link.expiresAt().toString());
    api.json(ctx, 201, body);
  }

  /** {@code DELETE .../links}: every link to the port issued so far stops working. */
  private void revoke(Context ctx) throws JsonProcessingException {
    String id = ctx.pathParam("id");
    int port = PortPath.port(ctx.pathParam("port"));
    sessions().get(id);
    links.revoke(id, port);
    api.json(ctx, 200, Map.of("revoked", true, "session_id", id, "port", port));
  }

  private void requirePorts() {
    if (!sessions().backendStatus().capabilities().contains(BoxCapabilities.PORTS)) {
      throw new BoxValidationException(
          "the "
              + sessions().backendStatus().name()
              + " backend cannot reach a sandbox's ports: it has no box-agent in its sandboxes");
    }
  }

  /** The link's lifetime: {@code ttl_sec}, 1 s to {@link PreviewLinks#MAX_TTL}, by default 1 h. */
  private Duration ttl(String body) throws JsonProcessingException {
    if (body.isBlank()) {
      return PreviewLinks.DEFAULT_TTL;
    }
    JsonNode node = api.mapper().readTree(body);
    if (!node.isObject()) {
      throw new BoxValidationException("request body must be a JSON object");
    }
    JsonNode ttl = node.get("ttl_sec");
    if (ttl == null || ttl.isNull()) {
      return PreviewLinks.DEFAULT_TTL;
    }
    long max = PreviewLinks.MAX_TTL.toSeconds();
    if (!ttl.canConvertToLong()
        || !ttl.isIntegralNumber()
        || ttl.asLong() < 1
        || ttl.asLong() > max) {
      throw new BoxValidationException("ttl_sec must be a whole number from 1 to " + max);
    }
    return Duration.ofSeconds(ttl.asLong());
  }
}
