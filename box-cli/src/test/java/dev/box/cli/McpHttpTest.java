package dev.box.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.spec.McpClientTransport;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;

/** {@code /mcp} of {@code box serve}: MCP over streamable HTTP, behind the control token. */
class McpHttpTest extends McpToolsContract {
  private static final String INITIALIZE =
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
          + "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";

  @Override
  McpClientTransport transport(URI uri, String token) {
    return HttpClientStreamableHttpTransport.builder(uri.toString())
        .endpoint("/mcp")
        .requestBuilder(HttpRequest.newBuilder().header("Authorization", "Bearer " + token))
        .build();
  }

  @Test
  void withoutTheToken_isRefusedWith401AndTheApisJsonError() throws Exception {
    HttpResponse<String> refused = post(null);
    HttpResponse<String> wrong = post("not-the-token");

    assertThat(refused.statusCode()).isEqualTo(401);
    assertThat(refused.headers().firstValue("Content-Type")).hasValue("application/json");
    assertThat(refused.body())
        .isEqualTo(
            "{\"error\":{\"code\":\"unauthorized\",\"message\":\"missing control token: send it"
                + " as 'Authorization: Bearer <token>'\"}}");
    assertThat(wrong.statusCode()).isEqualTo(401);
    assertThat(wrong.body()).contains("\"code\":\"unauthorized\"").doesNotContain(token());
  }

  @Test
  void withTheToken_initializes() throws Exception {
    HttpResponse<String> accepted = post(token());

    assertThat(accepted.statusCode()).isEqualTo(200);
    assertThat(accepted.headers().firstValue("Mcp-Session-Id")).isPresent();
    assertThat(accepted.body()).contains("\"serverInfo\"").contains("\"name\":\"box\"");
  }

  private HttpResponse<String> post(@org.jspecify.annotations.Nullable String token)
      throws Exception {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(server().uri().resolve("/mcp"))
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .POST(HttpRequest.BodyPublishers.ofString(INITIALIZE));
    if (token != null) {
      request.header("Authorization", "Bearer " + token);
    }
    try (HttpClient http = HttpClient.newHttpClient()) {
      return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
  }
}
