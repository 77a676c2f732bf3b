package dev.box.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code box serve -s} launched exactly as LangBot launches its runtime child: the same flags and
 * environment, and raw JSON lines on its stdin and stdout.
 */
class StdioControlProcessTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String INSTANCE = "langbot-instance-7";
  private static final String CONTEXT =
      "{\"instance_uuid\": \"" + INSTANCE + "\", \"workspace_uuid\": \"ws-1\"}";

  @TempDir Path dataDir;

  @Test
  void stdioMode_answersPingAndExec_andStdoutCarriesOnlyProtocolLines() throws Exception {
    Process process = launch("0");
    List<String> lines = new ArrayList<>();
    try {
      OutputStream stdin = process.getOutputStream();
      BufferedReader stdout =
          new BufferedReader(
              new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));

      send(stdin, "{\"seq_id\": 1, \"action\": \"__ping\", \"data\": {}}");
      JsonNode ping = JSON.readTree(readLine(stdout, lines));
      assertThat(ping.path("seq_id").asInt()).isEqualTo(1);
      assertThat(ping.path("code").asInt()).isZero();

      send(
          stdin,
          "{\"seq_id\": 2, \"action\": \"box_exec\", \"data\": {\"session_id\": \"s\", \"cmd\":"
              + " \"echo hi from stdio\"}, \"context\": "
              + CONTEXT
              + "}");
      JsonNode exec = JSON.readTree(readLine(stdout, lines));
      assertThat(exec.path("seq_id").asInt()).isEqualTo(2);
      assertThat(exec.path("message").asText()).isEqualTo("success");
      assertThat(exec.path("data").path("stdout").asText()).isEqualTo("hi from stdio");
      assertThat(exec.path("data").path("session_id").asText()).isEqualTo("s");

      send(
          stdin,
          "{\"seq_id\": 3, \"action\": \"box_exec\", \"data\": {\"session_id\": \"s\", \"cmd\":"
              + " \"printf '%0100000d' 0\"}, \"context\": "
              + CONTEXT
              + "}");
      assertThat(readLine(stdout, lines)).startsWith("{\"type\":\"chunk_start\"");
      StringBuilder big = new StringBuilder();
      for (String line = readLine(stdout, lines);
          !line.equals("{\"type\":\"chunk_end\"}");
          line = readLine(stdout, lines)) {
        big.append(JSON.readTree(line).path("data").asText());
      }
      JsonNode chunked = JSON.readTree(big.toString());
      assertThat(chunked.path("seq_id").asInt()).isEqualTo(3);
      assertThat(chunked.path("data").path("stdout").asText()).hasSize(100_000);

      String longRequest =
          "{\"seq_id\": 4, \"action\": \"box_exec\", \"data\": {\"session_id\": \"s\","
              + " \"cmd\": \"echo "
              + "b".repeat(40_000)
              + " | wc -c\"}, \"context\": "
              + CONTEXT
              + "}";
      send(stdin, "{\"type\":\"chunk_start\",\"total_size\":" + longRequest.length() + "}");
      for (int offset = 0; offset < longRequest.length(); offset += 16 * 1024) {
        String piece =
            longRequest.substring(offset, Math.min(longRequest.length(), offset + 16 * 1024));
        send(
            stdin,
            "{\"type\":\"chunk_data\",\"data\":"
                + JSON.writeValueAsString(piece)
                + ",\"offset\":"
                + offset
                + "}");
      }
      send(stdin, "{\"type\":\"chunk_end\"}");
      JsonNode fromChunks = JSON.readTree(readLine(stdout, lines));
      assertThat(fromChunks.path("seq_id").asInt()).isEqualTo(4);
      assertThat(fromChunks.path("data").path("stdout").asText()).isEqualTo("40001");

      stdin.close();
      assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
      String rest = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(rest).isEmpty();
      for (String protocolLine : lines) {
        assertThat(JSON.readTree(protocolLine).isObject()).as(protocolLine).isTrue();
      }
      assertThat(dataDir.resolve(".box-state/control-token"))
          .as("LangBot's token is the token")
          .doesNotExist();
    } finally {
      process.destroyForcibly();
    }
  }

  @Test
  void aFiveMibExecOutput_arrivesWholeThroughTheChunkedFraming() throws Exception {
    int size = 5 * 1024 * 1024;
    Process process = launch("0", "--max-output-bytes", "8388608");
    List<String> lines = new ArrayList<>();
    try {
      BufferedReader stdout =
          new BufferedReader(
              new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
      send(
          process.getOutputStream(),
          "{\"seq_id\": 1, \"action\": \"box_exec\", \"data\": {\"session_id\": \"big\","
              + " \"cmd\": \"head -c "
              + size
              + " /dev/zero | tr '\\\\0' a\", \"timeout_sec\": 120}, \"context\": "
              + CONTEXT
              + "}");

      JsonNode start = JSON.readTree(readLine(stdout, lines));
      assertThat(start.path("type").asText()).isEqualTo("chunk_start");
      StringBuilder message = new StringBuilder();
      int pieces = 0;
      for (String line = readLine(stdout, lines);
          !line.equals("{\"type\":\"chunk_end\"}");
          line = readLine(stdout, lines)) {
        JsonNode piece = JSON.readTree(line);
        assertThat(piece.path("type").asText()).isEqualTo("chunk_data");
        message.append(piece.path("data").asText());
        pieces++;
      }
      assertThat(message.toString().getBytes(StandardCharsets.UTF_8))
          .hasSize(start.path("total_size").asInt());
      assertThat(pieces).isGreaterThanOrEqualTo(size / (16 * 1024));

      JsonNode response = JSON.readTree(message.toString());
      assertThat(response.path("seq_id").asInt()).isEqualTo(1);
      assertThat(response.path("message").asText()).isEqualTo("success");
      JsonNode result = response.path("data");
      assertThat(result.path("exit_code").asInt()).isZero();
      String output = result.path("stdout").asText();
      assertThat(output.strip()).hasSize(size);
      assertThat(output).hasSize(size);
      assertThat(output.chars().allMatch(c -> c == 'a')).as("only a").isTrue();
    } finally {
      stop(process);
    }
  }

  /**
   * Ends the server as LangBot does, by closing its stdin, so that it shuts down cleanly (its
   * pre-started sandboxes and their slot mounts go with it); kills it if it does not end.
   */
  private static void stop(Process process) throws InterruptedException {
    try {
      process.getOutputStream().close();
    } catch (java.io.IOException e) {
      // Gone already.
    }
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      process.destroyForcibly();
    }
  }

  @Test
  void aPortThatCannotBeBound_isOnlyAWarningInStdioMode() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      Process process = launch(String.valueOf(taken.getLocalPort()));
      try {
        BufferedReader stdout =
            new BufferedReader(
                new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        send(process.getOutputStream(), "{\"seq_id\": 1, \"action\": \"__ping\", \"data\": {}}");
        JsonNode ping = JSON.readTree(readLine(stdout, new ArrayList<>()));
        assertThat(ping.path("code").asInt()).isZero();
      } finally {
        stop(process);
      }
    }
  }

  /**
   * Launches {@code box serve -s} as LangBot launches its runtime: flags and environment, plus
   * {@code extraFlags}.
   */
  private Process launch(String port, String... extraFlags) throws IOException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> command =
        new ArrayList<>(
            List.of(
                java,
                "-cp",
                System.getProperty("java.class.path"),
                "dev.box.cli.Main",
                "serve",
                "--backend",
                "bwrap",
                "-s",
                "--ws-control-port",
                port,
                "--data-dir",
                dataDir.toString()));
    command.addAll(List.of(extraFlags));
    ProcessBuilder builder =
        new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD);
    builder.environment().put("LANGBOT_BOX_CONTROL_TOKEN", "x".repeat(16) + "Y".repeat(48));
    builder.environment().put("LANGBOT_BOX_TRUSTED_INSTANCE_UUID", INSTANCE);
    builder.environment().put("LANGBOT_BOX_CONFIG", "{}");
    return builder.start();
  }

  private static void send(OutputStream stdin, String line) throws IOException {
    stdin.write((line + "\n").getBytes(StandardCharsets.UTF_8));
    stdin.flush();
  }

  private static String readLine(BufferedReader stdout, List<String> lines) throws IOException {
    String line = stdout.readLine();
    assertThat(line).as("a line on stdout").isNotNull();
    lines.add(line);
    return line;
  }
}
