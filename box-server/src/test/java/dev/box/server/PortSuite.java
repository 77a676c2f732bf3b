package dev.box.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.box.testclient.Answer;
import dev.box.testclient.BoxHttp;
import dev.box.testclient.BoxSocket;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * A sandbox's ports through the real server: a Python server ({@code ports/port_server.py}) runs in
 * a sandbox with the network off, and the tests reach it through {@code /v1/sessions/{id}/ports/
 * {port}/...} and through preview links, over real sockets. Each backend's test class gives the
 * server and how Python runs in its sandboxes.
 */
abstract class PortSuite {
  static final int PORT = 8123;
  static final String SCRIPT = resource("ports/port_server.py");
  private final HttpClient http = HttpClient.newHttpClient();

  /** The server, on the backend under test. */
  abstract TestServer box();

  /** The session spec's fields besides the network, as JSON members (or empty). */
  abstract String specFields();

  /** The managed process that runs {@code port_server.py} on {@link #PORT}, as JSON. */
  abstract String serverProcess();

  static String resource(String name) {
    try (InputStream in =
        Objects.requireNonNull(PortSuite.class.getClassLoader().getResourceAsStream(name))) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A session with the network off whose port {@link #PORT} serves the test server. */
  String serving(String session) {
    String fields = specFields();
    Answer created =
        box()
            .post(
                "/v1/sessions/" + session,
                "{\"network\":\"off\"" + (fields.isEmpty() ? "" : "," + fields) + "}");
    assertThat(created.status()).as(created.body().toString()).isIn(200, 201);
    Answer started = box().post("/v1/sessions/" + session + "/managed-process", serverProcess());
    assertThat(started.status()).as(started.body().toString()).isEqualTo(201);
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> box().get(ports(session) + "/headers").status() == 200);
    return session;
  }

  static String ports(String session) {
    return "/v1/sessions/" + session + "/ports/" + PORT;
  }

  URI uri(String path) {
    return URI.create("http://127.0.0.1:" + box().server.port() + path);
  }

  HttpRequest.Builder request(String path) {
    HttpRequest.Builder request = HttpRequest.newBuilder(uri(path)).timeout(Duration.ofMinutes(2));
    box().headers().forEach(request::header);
    return request;
  }

  static byte[] pattern(int n) {
    byte[] bytes = new byte[n];
    for (int i = 0; i < n; i++) {
      bytes[i] = (byte) (i % 251);
    }
    return bytes;
  }

  static byte[] sha256(InputStream in) throws IOException {
    try (in) {
      MessageDigest digest = MessageDigest.getInstance("SHA-256");
      byte[] buffer = new byte[65536];
      for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
        digest.update(buffer, 0, n);
      }
      return digest.digest();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  static byte[] sha256(byte[] bytes) throws IOException {
    return sha256(new java.io.ByteArrayInputStream(bytes));
  }

  @Test
  void get_streamsALargeBodyExact_withContentLengthAndChunked() throws Exception {
    String session = serving("port-get");
    int n = 24 * 1024 * 1024 + 17;
    for (String route : new String[] {"/bytes", "/chunked"}) {
      HttpResponse<InputStream> answer =
          http.send(
              request(ports(session) + route + "?n=" + n).GET().build(),
              HttpResponse.BodyHandlers.ofInputStream());
      assertThat(answer.statusCode()).isEqualTo(200);
      assertThat(sha256(answer.body())).as(route).isEqualTo(sha256(pattern(n)));
    }
  }

  @Test
  void post_streamsALargeBodyBothWays_exact_knownLengthOrChunked() throws Exception {
    String session = serving("port-post");
    byte[] body = new byte[12 * 1024 * 1024 + 5];
    new Random(7).nextBytes(body);
    HttpResponse<byte[]> known =
        http.send(
            request(ports(session) + "/echo")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body))
                .build(),
            HttpResponse.BodyHandlers.ofByteArray());
    assertThat(known.statusCode()).isEqualTo(200);
    assertThat(sha256(known.body())).isEqualTo(sha256(body));

    HttpResponse<byte[]> chunked =
        http.send(
            request(ports(session) + "/echo")
                .POST(
                    HttpRequest.BodyPublishers.ofInputStream(
                        () -> new java.io.ByteArrayInputStream(body)))
                .build(),
            HttpResponse.BodyHandlers.ofByteArray());
    assertThat(chunked.statusCode()).isEqualTo(200);
    assertThat(chunked.body()).hasSize(body.length);
    assertThat(sha256(chunked.body())).isEqualTo(sha256(body));
  }

  @Test
  void headers_boxCredentialsAndHopByHopStayOut_hostIsTheSandboxLoopback() throws Exception {
    String session = serving("port-headers");
    Answer seen =
        box()
            .send(
                "GET",
                ports(session) + "/headers",
                "",
                Map.of(
                    "Authorization",
                    "Bearer " + box().token(),
                    "X-Custom",
                    "kept",
                    "Cookie",
                    "app=1"));
    assertThat(seen.status()).isEqualTo(200);
    assertThat(seen.body().has("authorization")).isFalse();
    assertThat(seen.body().path("host").asText()).isEqualTo("127.0.0.1:" + PORT);
    assertThat(seen.body().path("x-custom").asText()).isEqualTo("kept");
    assertThat(seen.body().path("cookie").asText()).isEqualTo("app=1");
    assertThat(seen.body().path("connection").asText()).isEqualTo("close");
    assertThat(seen.body().path("x-forwarded-host").asText())
        .isEqualTo("127.0.0.1:" + box().server.port());

    HttpResponse<String> cookie =
        http.send(
            request(ports(session) + "/cookie").GET().build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(cookie.headers().allValues("Set-Cookie")).containsExactly("app=1; Path=/");
  }

  @Test
  void webSocket_echoesThroughTheProxy_textAndBinary() {
    String session = serving("port-ws");
    try (BoxSocket socket = WsClient.connect(box(), ports(session) + "/ws")) {
      socket.send("hello");
      assertThat(socket.nextText()).isEqualTo("hello");
      byte[] big = pattern(300_000);
      socket.sendBinary(big);
      assertThat(socket.next())
          .isInstanceOfSatisfying(
              BoxSocket.Binary.class, b -> assertThat(b.bytes()).isEqualTo(big));
    }
  }

  @Test
  void errors_nothingListening502_badPort400_noToken401() {
    String session = serving("port-errors");
    Answer nothing = box().get("/v1/sessions/" + session + "/ports/8999/");
    assertThat(nothing.status()).isEqualTo(502);
    assertThat(nothing.errorMessage()).contains("8999");
    for (String port : new String[] {"0", "65536", "abc", "-1", "99999999"}) {
      Answer bad = box().get("/v1/sessions/" + session + "/ports/" + port + "/");
      assertThat(bad.status()).as(port).isEqualTo(400);
      assertThat(bad.errorCode()).isEqualTo("validation_error");
    }
    Answer anonymous = box().send("GET", ports(session) + "/headers", "", Map.of());
    assertThat(anonymous.status()).isEqualTo(401);
    Answer unknown = box().get("/v1/sessions/no-such-session/ports/" + PORT + "/");
    assertThat(unknown.status()).isEqualTo(404);
    Answer dots = box().get(ports(session) + "/a/%2e%2e/headers");
    assertThat(dots.status()).isEqualTo(400);
  }

  @Test
  void hostileServer_endlessHeadOrChunkLine_isCutAt502() {
    String session = serving("port-hostile");
    Answer head = box().get(ports(session) + "/hostile-head");
    assertThat(head.status()).isEqualTo(502);
    assertThat(head.errorMessage()).contains("longer than");

    Answer chunk = box().get(ports(session) + "/hostile-chunk");
    assertThat(chunk.status()).as("nothing was sent yet: still an error answer").isEqualTo(502);
    assertThat(chunk.errorMessage()).contains("chunked body");
    assertThat(box().get(ports(session) + "/headers").status())
        .as("the server goes on serving")
        .isEqualTo(200);
  }

  @Test
  void link_opensThePortWithoutTheToken_untilRevoked() throws Exception {
    String session = serving("port-link");
    Answer issued = box().post(ports(session) + "/links", "{\"ttl_sec\": 600}");
    assertThat(issued.status()).as(issued.body().toString()).isEqualTo(201);
    String url = issued.text("url");
    assertThat(url)
        .startsWith("http://127.0.0.1:" + box().server.port() + "/preview/")
        .endsWith("/");
    assertThat(issued.text("expires_at")).isNotEmpty();

    HttpResponse<String> page =
        http.send(
            HttpRequest.newBuilder(URI.create(url + "headers")).GET().build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(page.statusCode()).isEqualTo(200);
    assertThat(page.body()).contains("127.0.0.1:" + PORT);
    try (BoxSocket socket =
        WsClient.connect(box().server.port(), URI.create(url).getRawPath() + "ws", Map.of())) {
      socket.send("through a link");
      assertThat(socket.nextText()).isEqualTo("through a link");
    }

    String token = url.substring(url.indexOf("/preview/") + 9, url.length() - 1);
    Answer revoked = box().delete(ports(session) + "/links");
    assertThat(revoked.status()).isEqualTo(200);
    Answer refused = anonymous("/preview/" + token + "/headers");
    assertThat(refused.status()).isEqualTo(404);
    assertThat(refused.errorMessage()).contains("revoked");

    Answer again = box().post(ports(session) + "/links", "{}");
    assertThat(anonymous(URI.create(again.text("url")).getRawPath() + "headers").status())
        .as("a link issued after the revocation works")
        .isEqualTo(200);
  }

  @Test
  void link_forgedOrOtherSessionOrDeletedSession_refused() {
    String session = serving("port-forged");
    String url = box().post(ports(session) + "/links", "{\"ttl_sec\": 60}").text("url");
    String token = url.substring(url.indexOf("/preview/") + 9, url.length() - 1);
    byte[] bytes = java.util.Base64.getUrlDecoder().decode(token);
    bytes[1 + 16 + 8 + 8 + 1] ^= 1; // the port's low byte
    String otherPort = java.util.Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    assertThat(anonymous("/preview/" + otherPort + "/headers").status()).isEqualTo(404);
    assertThat(anonymous("/preview/" + "A".repeat(80) + "/headers").status()).isEqualTo(404);
    assertThat(anonymous("/preview/" + token + "/../../v1/sessions").status()).isIn(400, 401, 404);
    assertThat(anonymous("/preview/" + token + "/%2e%2e/x").status()).isEqualTo(400);
    Answer bare = anonymous("/preview/" + token);
    assertThat(bare.status()).as("redirected under the link's root").isEqualTo(308);

    for (String ttl : new String[] {"0", "-5", "604801", "\"10\"", "1.5"}) {
      Answer bad = box().post(ports(session) + "/links", "{\"ttl_sec\": " + ttl + "}");
      assertThat(bad.status()).as(ttl).isEqualTo(400);
    }
    assertThat(box().post(ports(session) + "/links", "[]").status()).isEqualTo(400);
    assertThat(box().send("POST", ports(session) + "/links", "{}", Map.of()).status())
        .isEqualTo(401);

    assertThat(box().delete("/v1/sessions/" + session).status()).isEqualTo(200);
    assertThat(anonymous("/preview/" + token + "/headers").status())
        .as("deleting the session revokes its links")
        .isEqualTo(404);
    serving(session);
    assertThat(anonymous("/preview/" + token + "/headers").status())
        .as("nor does a new session of the same id honour them")
        .isEqualTo(404);
  }

  @Test
  void browser_opensALink_whosePageEchoesThroughAWebSocket() throws Exception {
    HeadlessChromium.assumePresent();
    String session = serving("port-browser");
    String url = box().post(ports(session) + "/links", "{\"ttl_sec\": 120}").text("url");

    String dom = HeadlessChromium.dumpDom(url);

    assertThat(dom).contains("<p id=\"out\">echo:hello</p>");
  }

  Answer anonymous(String path) {
    return box().send("GET", path, "", Map.of());
  }

  static String json(String text) {
    return BoxHttp.quote(text);
  }
}
