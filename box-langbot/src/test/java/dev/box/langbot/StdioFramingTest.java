package dev.box.langbot;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.box.api.BoxJson;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class StdioFramingTest {
  private static final ObjectMapper JSON = BoxJson.newMapper();

  @Test
  void smallMessages_travelAsOneLine() throws Exception {
    assertThat(new StdioFraming(JSON).encode("{\"a\":1}")).containsExactly("{\"a\":1}");
  }

  @Test
  void largeMessages_areChunkedAndReassembled() throws Exception {
    String big = "{\"data\":\"" + "é€😀x".repeat(20_000) + "\"}";
    List<String> lines = new StdioFraming(JSON).encode(big);

    assertThat(lines.get(0))
        .isEqualTo(
            "{\"type\":\"chunk_start\",\"total_size\":"
                + big.getBytes(StandardCharsets.UTF_8).length
                + "}");
    assertThat(lines.getLast()).isEqualTo("{\"type\":\"chunk_end\"}");
    for (String line : lines.subList(1, lines.size() - 1)) {
      String data = JSON.readTree(line).path("data").asText();
      assertThat(data.getBytes(StandardCharsets.UTF_8).length)
          .isLessThanOrEqualTo(StdioFraming.CHUNK_BYTES);
    }
    StdioFraming reader = new StdioFraming(JSON);
    String result = null;
    for (String line : lines) {
      result = reader.decode(line);
    }
    assertThat(result).isEqualTo(big);
  }
}
