package dev.box.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.box.api.BoxValidationException;
import dev.box.server.http.HttpMount;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A servlet a launcher mounts: served on the API's port, behind the API's control token. */
class HttpMountTest {
  @TempDir static Path dataDir;
  private static @Nullable BoxServer server;

  /** Answers asynchronously, as a streaming transport does, with the path it served. */
  private static final class AsyncEcho extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) {
      AsyncContext async = request.startAsync();
      Thread.ofVirtual()
          .start(
              () -> {
                try {
                  response.setContentType("text/plain");
                  response.getWriter().print("served " + request.getRequestURI());
                } catch (IOException e) {
                  response.setStatus(500);
                }
                async.complete();
              });
    }
  }

  @BeforeAll
  static void start() throws IOException {
    server =
        BoxServer.start(
            ServerConfig.resolve(
                Map.of("port", "0", "data_dir", dataDir.toString(), "backend", "bwrap"), Map.of()),
            Clock.systemUTC(),
            Map.of(),
            false,
            List.of(new HttpMount("/echo", new AsyncEcho())));
  }

  @AfterAll
  static void stop() throws IOException {
    if (server != null) {
      server.close();
    }
  }

  @Test
  void withTheToken_theServletAnswersItsExactPath_andNotAPathBelowIt() throws Exception {
    HttpResponse<String> mounted = get("/echo", running().controlToken());
    HttpResponse<String> below = get("/echo/more", running().controlToken());

    assertThat(mounted.statusCode()).isEqualTo(200);
    assertThat(mounted.body()).isEqualTo("served /echo");
    assertThat(below.statusCode()).isEqualTo(404);
    assertThat(below.body()).contains("\"code\":\"not_found\"");
  }

  @Test
  void withoutTheToken_isRefusedAsEveryRouteIs() throws Exception {
    HttpResponse<String> mounted = get("/echo", null);
    HttpResponse<String> route = get("/v1/sessions", null);

    assertThat(mounted.statusCode()).isEqualTo(401);
    assertThat(mounted.headers().firstValue("Content-Type")).hasValue("application/json");
    assertThat(mounted.body()).isEqualTo(route.body()).contains("\"code\":\"unauthorized\"");
    assertThat(get("/echo", "wrong").body()).contains("invalid control token");
  }

  @Test
  void aMountPath_mustBeExactAndOutsideTheApi() {
    AsyncEcho servlet = new AsyncEcho();

    assertThatThrownBy(() -> new HttpMount("/mcp/*", servlet))
        .isInstanceOf(BoxValidationException.class)
        .hasMessageContaining("exact path");
    assertThatThrownBy(() -> new HttpMount("/v1/mcp", servlet))
        .isInstanceOf(BoxValidationException.class)
        .hasMessage("mount path /v1/mcp is the API's own");
    assertThatThrownBy(() -> new HttpMount("/healthz", servlet))
        .isInstanceOf(BoxValidationException.class);
  }

  private static HttpResponse<String> get(String path, @Nullable String token) throws Exception {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + running().port() + path));
    if (token != null) {
      request.header("Authorization", "Bearer " + token);
    }
    try (HttpClient http = HttpClient.newHttpClient()) {
      return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
  }

  private static BoxServer running() {
    return java.util.Objects.requireNonNull(server);
  }
}
