package dev.box.bench;

import dev.box.api.internal.ShellScript;
import java.io.IOException;
import java.net.http.WebSocket;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongFunction;

/**
 * The measurements of the stdio relay of managed processes, over the JDK's WebSocket: line round
 * trips through {@code cat} in a sandbox and, as their floor, through a plain {@code cat} child;
 * and the throughput of a process writing as fast as it can, in raw mode with a plain pipe as its
 * floor, and in line mode. Each measurement deletes its session when it succeeds; after a failure
 * {@link LocalBox#close()} does.
 */
final class RelayScenarios {
  /** Long enough for 256 MiB at 1 MB/s: a slow relay is measured, not failed. */
  private static final Duration DRAIN_TIMEOUT = Duration.ofMinutes(5);

  private static final String PROCESS_ID = "bench";

  /** {@code yes | head -c "$1"}, the byte count its one argument. */
  private static final String YES_LINES = ShellScript.load(RelayScenarios.class, "yes-lines.sh");

  private final BenchClient client;
  private final int warmup;

  RelayScenarios(BenchClient client, int warmup) {
    this.client = client;
    this.warmup = warmup;
  }

  /**
   * What a drain measured, from the first frame to the close.
   *
   * @param bytes the stdout bytes received
   * @param messages the WebSocket messages that carried them
   * @param seconds from the first frame to the close
   */
  record Throughput(long bytes, long messages, double seconds) {
    double megabytesPerSecond() {
      return bytes / 1e6 / seconds;
    }

    double messagesPerSecond() {
      return messages / seconds;
    }
  }

  /**
   * Everything the relay measurements found.
   *
   * @param floor floor 3: line round trips through a plain {@code cat} child of this JVM
   * @param roundTrip line round trips through the relay and {@code cat} in a sandbox
   * @param floorRaw floor 4: {@code head -c N /dev/zero} read from a plain child's pipe
   * @param raw raw-mode throughput of {@code head -c N /dev/zero}
   * @param lines line-mode throughput of {@code yes | head -c N}
   */
  record Result(
      Latencies floor,
      Latencies roundTrip,
      Throughput floorRaw,
      Throughput raw,
      Throughput lines) {}

  /** Floor 3: a line written to a plain {@code cat} child's stdin and read from its stdout. */
  Latencies floorRoundTrips(int count) throws IOException, InterruptedException {
    try (CatFloor cat = CatFloor.start()) {
      return Sampler.measure(warmup, count, i -> expectEcho(message(i), cat.echo(message(i))));
    }
  }

  /** A TEXT frame to {@code cat} in a sandbox and its line back as a TEXT frame. */
  Latencies relayRoundTrips(int count) throws IOException, InterruptedException {
    String id = "bench-relay-echo";
    client.create(id);
    client.startProcess(id, PROCESS_ID, List.of("cat"));
    Latencies latencies;
    try (RelayEcho relay = RelayEcho.attach(client, id, PROCESS_ID)) {
      latencies =
          Sampler.measure(warmup, count, i -> expectEcho(message(i), relay.echo(message(i))));
    }
    client.delete(id);
    return latencies;
  }

  /** Floor 4: {@code head -c bytes /dev/zero}, a plain child of this JVM, read from its pipe. */
  Throughput floorRaw(long bytes) throws IOException, InterruptedException {
    return ProcessFloors.readThroughPipe(zeros(bytes));
  }

  /** {@code head -c bytes /dev/zero} in a sandbox, read from the relay in raw mode. */
  Throughput raw(long bytes) throws IOException, InterruptedException {
    return drain("bench-relay-raw", RelayScenarios::zeros, true, bytes);
  }

  private static List<String> zeros(long bytes) {
    return List.of("head", "-c", Long.toString(bytes), "/dev/zero");
  }

  /** {@code yes | head -c bytes}: lines of 2 bytes, read in line mode, one TEXT frame each. */
  Throughput lines(long bytes) throws IOException, InterruptedException {
    return drain(
        "bench-relay-line",
        n -> List.of("sh", "-c", YES_LINES, "sh", Long.toString(n)),
        false,
        bytes);
  }

  /**
   * In a new session, drains a quarter of {@code bytes} to warm up and then {@code bytes}, each
   * from a new process: {@code command} for the byte count.
   */
  private Throughput drain(String id, LongFunction<List<String>> command, boolean raw, long bytes)
      throws IOException, InterruptedException {
    client.create(id);
    long warmupBytes = bytes / 8 * 2; // even, so that it ends with a whole 2-byte line
    drainOnce(id, "warmup", command.apply(warmupBytes), raw, warmupBytes);
    Throughput throughput = drainOnce(id, PROCESS_ID, command.apply(bytes), raw, bytes);
    client.delete(id);
    return throughput;
  }

  /** Starts {@code argv} as the process {@code processId}, which must write {@code bytes}. */
  private Throughput drainOnce(
      String id, String processId, List<String> argv, boolean raw, long bytes)
      throws IOException, InterruptedException {
    client.startProcess(id, processId, argv);
    RelayDrain drain = new RelayDrain(raw);
    WebSocket socket = client.relay(id, processId, raw ? "?mode=raw" : "", drain);
    RelayDrain.Result result = await(drain, socket);
    if (result.bytes() != bytes
        || result.closeCode() != WebSocket.NORMAL_CLOSURE
        || !result.closeReason().equals("exit_code=0")) {
      throw new IllegalStateException(
          String.format(
              Locale.ROOT,
              "%s: expected %d bytes and the close 1000 exit_code=0, got %d bytes and %d %s",
              String.join(" ", argv),
              bytes,
              result.bytes(),
              result.closeCode(),
              result.closeReason()));
    }
    return new Throughput(result.bytes(), result.messages(), result.seconds());
  }

  private static RelayDrain.Result await(RelayDrain drain, WebSocket socket)
      throws IOException, InterruptedException {
    try {
      return drain.result().get(DRAIN_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      socket.abort();
      throw new IOException("the relay failed: " + e.getCause(), e);
    } catch (TimeoutException e) {
      socket.abort();
      throw new IllegalStateException("the relay did not close within " + DRAIN_TIMEOUT, e);
    }
  }

  /** A line like an MCP client's request, different each time. */
  private static String message(int iteration) {
    return "{\"jsonrpc\":\"2.0\",\"id\":" + iteration + ",\"method\":\"ping\"}";
  }

  private static void expectEcho(String sent, String received) {
    if (!received.equals(sent)) {
      throw new IllegalStateException("sent '" + sent + "' but got back '" + received + "'");
    }
  }
}
