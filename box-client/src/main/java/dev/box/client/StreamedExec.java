package dev.box.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.BoxExecutionResult;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;

/**
 * Reads the answer of a streamed exec: {@code stdout} and {@code stderr} lines to the listener,
 * then the {@code result} line as the result, or the {@code error} line as its exception.
 */
final class StreamedExec {
  private final ObjectMapper mapper;
  private final ExecOutput output;

  StreamedExec(ObjectMapper mapper, ExecOutput output) {
    this.mapper = mapper;
    this.output = output;
  }

  BoxExecutionResult read(HttpResponse<InputStream> response) {
    String where = response.request().method() + " " + response.uri();
    try (BufferedReader lines =
        new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
      for (String line = lines.readLine(); line != null; line = lines.readLine()) {
        if (line.isBlank()) {
          continue;
        }
        JsonNode event = mapper.readTree(line);
        switch (event.path("type").asText()) {
          case "stdout" -> output.stdout(event.path("data").asText());
          case "stderr" -> output.stderr(event.path("data").asText());
          case "result" -> {
            return result((ObjectNode) event);
          }
          case "error" -> throw ErrorAnswers.toException(500, line, "POST", response.uri());
          default -> {
            // A kind of line this client does not know yet: what it knows is still right.
          }
        }
      }
    } catch (IOException | ClassCastException e) {
      throw new BoxException(
          BoxErrorCode.RUNTIME_UNAVAILABLE, "the answer to " + where + " broke off: " + e, e);
    }
    throw new BoxException(
        BoxErrorCode.RUNTIME_UNAVAILABLE, "the answer to " + where + " ended without a result");
  }

  private BoxExecutionResult result(ObjectNode line) throws IOException {
    line.remove("type");
    line.put("stdout", "");
    line.put("stderr", "");
    return mapper.treeToValue(line, BoxExecutionResult.class);
  }
}
