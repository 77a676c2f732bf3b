package dev.box.client;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.box.api.BoxBackendHealth;
import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.BoxExecutionResult;
import dev.box.api.BoxJson;
import dev.box.api.BoxRuntimeStatus;
import dev.box.api.BoxRuntimeUnavailableException;
import dev.box.api.BoxSessionInfo;
import dev.box.api.BoxSpec;
import dev.box.api.BoxValidationException;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * A client of one Box server's HTTP API.
 *
 * <p>Every method sends one request and returns the wire type the server answered with. Failures
 * are always {@link BoxException}s: an error answer becomes the subtype the server raised (for
 * example {@link dev.box.api.BoxSessionNotFoundException}), and a server that cannot be reached or
 * does not answer in time becomes a {@link BoxRuntimeUnavailableException}.
 *
 * <p>A client is immutable and thread-safe; share one per server. Close it to release the
 * connections of the underlying {@link HttpClient}.
 */
public final class BoxClient implements AutoCloseable {
  /** The time a request may take when the builder sets none. */
  public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(30);

  private static final TypeReference<List<BoxSessionInfo>> SESSION_LIST = new TypeReference<>() {};

  private final URI baseUri;
  private final String base;
  private final @Nullable String authorization;
  private final Duration requestTimeout;
  private final HttpClient http;
  private final ObjectMapper mapper = BoxJson.newMapper();

  private BoxClient(URI baseUri, @Nullable String controlToken, Duration requestTimeout) {
    this.baseUri = baseUri;
    this.base = baseUri.toString().replaceAll("/+$", "");
    this.authorization = controlToken == null ? null : "Bearer " + controlToken;
    this.requestTimeout = requestTimeout;
    this.http =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(requestTimeout)
            .followRedirects(HttpClient.Redirect.NEVER)
            .build();
  }

  /**
   * A client of the server at {@code baseUri} without a control token and with the {@linkplain
   * #DEFAULT_REQUEST_TIMEOUT default request timeout}.
   *
   * @param baseUri the server's address, for example {@code http://127.0.0.1:5410}
   * @throws IllegalArgumentException when {@code baseUri} is not an http or https URL with a host
   */
  public static BoxClient connect(URI baseUri) {
    return builder(baseUri).build();
  }

  /**
   * A builder of a client of the server at {@code baseUri}, to set a control token or a timeout.
   *
   * @param baseUri the server's address; a path prefix such as {@code http://proxy/box/} is kept
   * @throws IllegalArgumentException when {@code baseUri} is not an http or https URL with a host
   */
  public static Builder builder(URI baseUri) {
    return new Builder(baseUri);
  }

  /** The server's address this client sends requests to. */
  public URI baseUri() {
    return baseUri;
  }

  /** The backend that runs sandboxes, whether it is available and which limits it enforces. */
  public BoxBackendHealth health() {
    return call("GET", "/v1/health", null, requestTimeout, BoxBackendHealth.class);
  }

  /** The runtime's status: backend health, session count, idle TTL and configured limits. */
  public BoxRuntimeStatus status() {
    return call("GET", "/v1/status", null, requestTimeout, BoxRuntimeStatus.class);
  }

  /** Every live session, in the server's order. */
  public List<BoxSessionInfo> sessions() {
    return call(
        "GET",
        "/v1/sessions",
        null,
        requestTimeout,
        mapper.getTypeFactory().constructType(SESSION_LIST));
  }

  /**
   * One live session.
   *
   * @throws dev.box.api.BoxSessionNotFoundException when no session has this id
   * @throws BoxValidationException when {@code sessionId} is blank
   */
  public BoxSessionInfo session(String sessionId) {
    return call("GET", sessionPath(sessionId), null, requestTimeout, BoxSessionInfo.class);
  }

  /**
   * Creates the session {@code spec} names from its session fields, or returns it when it exists
   * with the same settings.
   *
   * @throws dev.box.api.BoxSessionConflictException when it exists with other settings
   * @throws dev.box.api.BoxCapacityExceededException when the server holds its maximum of sessions
   */
  public BoxSessionInfo createSession(BoxSpec spec) {
    return call("POST", sessionPath(spec.sessionId()), spec, requestTimeout, BoxSessionInfo.class);
  }

  /**
   * Stops the session and deletes its private workspace.
   *
   * @throws dev.box.api.BoxSessionNotFoundException when no session has this id
   * @throws BoxValidationException when {@code sessionId} is blank
   */
  public void deleteSession(String sessionId) {
    call("DELETE", sessionPath(sessionId), null, requestTimeout, Map.class);
  }

  /**
   * Runs {@code spec.cmd()} in the session {@code spec} names, creating the session first if
   * needed, and waits for it to finish.
   *
   * <p>A non-zero exit code and a timeout are results, not errors: see {@link
   * BoxExecutionResult#status()}. The request may take the spec's {@code timeout_sec} plus this
   * client's request timeout before it is abandoned.
   */
  public BoxExecutionResult exec(BoxSpec spec) {
    Duration timeout = Duration.ofSeconds(spec.timeoutSec()).plus(requestTimeout);
    return call(
        "POST", sessionPath(spec.sessionId()) + "/exec", spec, timeout, BoxExecutionResult.class);
  }

  /** Releases the connections; requests in flight complete first. */
  @Override
  public void close() {
    http.close();
  }

  private static String sessionPath(String sessionId) {
    String id = sessionId.strip();
    if (id.isEmpty()) {
      throw new BoxValidationException("session_id must not be empty");
    }
    // URLEncoder encodes for forms, where a space is '+'; in a path '+' is a literal plus.
    return "/v1/sessions/" + URLEncoder.encode(id, StandardCharsets.UTF_8).replace("+", "%20");
  }

  private <T> T call(
      String method, String path, @Nullable Object body, Duration timeout, Class<T> answer) {
    return call(method, path, body, timeout, mapper.constructType(answer));
  }

  private <T> T call(
      String method, String path, @Nullable Object body, Duration timeout, JavaType answer) {
    URI uri = URI.create(base + path);
    HttpRequest.Builder request =
        HttpRequest.newBuilder(uri).timeout(timeout).header("Accept", "application/json");
    if (authorization != null) {
      request.header("Authorization", authorization);
    }
    if (body == null) {
      request.method(method, BodyPublishers.noBody());
    } else {
      request
          .header("Content-Type", "application/json")
          .method(method, BodyPublishers.ofString(encode(body), StandardCharsets.UTF_8));
    }
    HttpResponse<String> response = send(request.build());
    if (response.statusCode() >= 400) {
      throw ErrorAnswers.toException(response.statusCode(), response.body(), method, uri);
    }
    try {
      return mapper.readValue(response.body(), answer);
    } catch (JsonProcessingException e) {
      throw new BoxException(
          BoxErrorCode.INTERNAL_ERROR,
          "unexpected answer to " + method + " " + uri + ": " + e.getOriginalMessage(),
          e);
    }
  }

  private String encode(Object body) {
    try {
      return mapper.writeValueAsString(body);
    } catch (JsonProcessingException e) {
      throw new BoxException(
          BoxErrorCode.INTERNAL_ERROR, "cannot encode the request: " + e.getOriginalMessage(), e);
    }
  }

  private HttpResponse<String> send(HttpRequest request) {
    try {
      return http.send(request, BodyHandlers.ofString(StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw ErrorAnswers.unavailable(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw ErrorAnswers.unavailable(e);
    }
  }

  /** Builds a {@link BoxClient}; the settings are checked as they are set. */
  public static final class Builder {
    private final URI baseUri;
    private @Nullable String controlToken;
    private Duration requestTimeout = DEFAULT_REQUEST_TIMEOUT;

    private Builder(URI baseUri) {
      String scheme = baseUri.getScheme();
      if (scheme == null
          || !(scheme.equalsIgnoreCase("http") || scheme.equalsIgnoreCase("https"))
          || baseUri.getHost() == null
          || baseUri.getRawQuery() != null
          || baseUri.getRawFragment() != null) {
        throw new IllegalArgumentException(
            "the Box URL must be an http or https URL with a host and no query, not '"
                + baseUri
                + "'");
      }
      this.baseUri = baseUri;
    }

    /**
     * Sends {@code token} as {@code Authorization: Bearer <token>} on every request; null or blank
     * sends none. Surrounding whitespace is ignored, as the server ignores it.
     *
     * @throws IllegalArgumentException when the token contains control characters
     */
    public Builder controlToken(@Nullable String token) {
      if (token == null || token.isBlank()) {
        controlToken = null;
        return this;
      }
      String stripped = token.strip();
      if (stripped.chars().anyMatch(c -> c < 0x20 || c == 0x7f)) {
        throw new IllegalArgumentException("the control token must not contain control characters");
      }
      controlToken = stripped;
      return this;
    }

    /**
     * Sets how long connecting and each request may take; {@link BoxClient#exec} adds the spec's
     * {@code timeout_sec} to it.
     *
     * @throws IllegalArgumentException when {@code timeout} is zero or negative
     */
    public Builder requestTimeout(Duration timeout) {
      if (timeout.isNegative() || timeout.isZero()) {
        throw new IllegalArgumentException("the request timeout must be positive, not " + timeout);
      }
      requestTimeout = timeout;
      return this;
    }

    /** A client with these settings. */
    public BoxClient build() {
      return new BoxClient(baseUri, controlToken, requestTimeout);
    }
  }
}
