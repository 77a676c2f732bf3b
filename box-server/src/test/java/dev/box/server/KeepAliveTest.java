package dev.box.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.box.api.BoxJson;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Malformed requests on one keep-alive connection, spoken byte by byte as a client would: every
 * answer is a JSON error, never the HTTP layer's own page, and after each the connection either
 * serves the next request or was announced closed with {@code Connection: close}.
 */
class KeepAliveTest {
  private static final String TOKEN = "keep-alive-test-token-0123456789abcdef";
  private static BoxServer server;

  @BeforeAll
  static void start() throws IOException {
    Map<String, String> flags = new LinkedHashMap<>();
    flags.put("port", "0");
    flags.put("data_dir", Files.createTempDirectory("box-keepalive-").toString());
    flags.put("backend", "bwrap");
    flags.put("control_token", TOKEN);
    server = BoxServer.start(ServerConfig.resolve(flags, Map.of()), Clock.systemUTC());
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  /** One parsed HTTP/1.1 response. */
  private record Response(int status, Map<String, String> headers, String body) {
    boolean closes() {
      return "close".equalsIgnoreCase(headers.getOrDefault("connection", ""));
    }
  }

  private static Response read(InputStream in) throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    int matched = 0;
    while (matched < 4) {
      int b = in.read();
      if (b < 0) {
        throw new IOException("the connection was closed without an answer");
      }
      head.write(b);
      matched = (b == '\r' || b == '\n') ? matched + 1 : 0;
    }
    String[] lines = head.toString(StandardCharsets.ISO_8859_1).split("\r\n");
    int status = Integer.parseInt(lines[0].split(" ")[1]);
    Map<String, String> headers = new LinkedHashMap<>();
    for (int i = 1; i < lines.length; i++) {
      int colon = lines[i].indexOf(':');
      if (colon > 0) {
        headers.put(
            lines[i].substring(0, colon).strip().toLowerCase(Locale.ROOT),
            lines[i].substring(colon + 1).strip());
      }
    }
    int length = Integer.parseInt(headers.getOrDefault("content-length", "0"));
    String body = new String(in.readNBytes(length), StandardCharsets.UTF_8);
    return new Response(status, headers, body);
  }

  private static void send(OutputStream out, String path) throws IOException {
    out.write(
        ("GET "
                + path
                + " HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer "
                + TOKEN
                + "\r\n\r\n")
            .getBytes(StandardCharsets.ISO_8859_1));
    out.flush();
  }

  @Test
  void malformedPaths_getJsonErrors_andTheConnectionStaysUsableOrSaysItCloses() throws IOException {
    String[] paths = {
      "/v1/sessions/%00",
      "/v1/sessions/%zz",
      "/v1/sessions/a%2Fb",
      "/v1/sessions/..%2f..%2fetc",
      "/v1/sessions/%c0%ae",
      "/v1/sessions/x%00y/exec",
      "/v1/sessions/" + "a".repeat(300),
      "/v1/sessions/\u00e9",
    };
    for (String path : paths) {
      try (Socket socket = new Socket("127.0.0.1", server.port())) {
        socket.setSoTimeout(10_000);
        send(socket.getOutputStream(), path);
        Response response = read(socket.getInputStream());

        assertThat(response.status()).as(path).isBetween(400, 499);
        assertThat(response.headers().get("content-type")).as(path).startsWith("application/json");
        JsonNode body = BoxJson.newMapper().readTree(response.body());
        assertThat(body.path("error").path("code").asText()).as(path).isNotEmpty();
        assertThat(response.body()).as(path).doesNotContain("Exception").doesNotContain("<html");
        if (!response.closes()) {
          send(socket.getOutputStream(), "/v1/sessions");
          Response next = read(socket.getInputStream());
          assertThat(next.status()).as("after " + path).isEqualTo(200);
        }
      }
    }
  }

  @Test
  void randomRequestsOnOneConnection_neverFindItClosedWithoutNotice() throws IOException {
    Random random = new Random(20261126);
    String alphabet = "ab-_.%0012zZ/\\?#&=;:@!$'()*+,~ \u00e9";
    Socket socket = new Socket("127.0.0.1", server.port());
    int reconnects = 0;
    try {
      for (int i = 0; i < 400; i++) {
        StringBuilder path = new StringBuilder("/v1/sessions/");
        int length = random.nextInt(12);
        for (int j = 0; j < length; j++) {
          path.append(alphabet.charAt(random.nextInt(alphabet.length())));
        }
        if (random.nextBoolean()) {
          path.append(random.nextBoolean() ? "/exec" : "/managed-process");
        }
        socket.setSoTimeout(10_000);
        send(socket.getOutputStream(), path.toString().replace(" ", "%20"));
        Response response = read(socket.getInputStream());
        assertThat(response.status()).as(path.toString()).isLessThan(500);
        assertThat(response.headers().get("content-type"))
            .as(path.toString())
            .startsWith("application/json");
        if (response.closes()) {
          socket.close();
          socket = new Socket("127.0.0.1", server.port());
          reconnects++;
        }
      }
    } finally {
      socket.close();
    }
    assertThat(reconnects)
        .as("some requests were malformed enough to end the connection")
        .isPositive();
  }
}
