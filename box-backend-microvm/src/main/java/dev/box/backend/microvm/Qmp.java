package dev.box.backend.microvm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A client of one VM's QEMU Machine Protocol: JSON objects, one a line, over the Unix socket QEMU
 * listens on in the VM's directory. Only what saving and restoring a VM needs: a command and its
 * answer (events between are skipped). Every call has a deadline: when it passes, the socket is
 * closed and the call fails.
 */
final class Qmp implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();

  /**
   * The longest line read: QEMU's answers to the few commands sent are a few hundred bytes, and
   * what a QEMU process writes is not trusted to be bounded.
   */
  static final int MAX_LINE = 64 * 1024;

  private final SocketChannel channel;
  private final InputStream in;
  private final ScheduledExecutorService timers;

  private Qmp(SocketChannel channel, ScheduledExecutorService timers) {
    this.channel = channel;
    this.in = new BufferedInputStream(Channels.newInputStream(channel));
    this.timers = timers;
  }

  /**
   * Connects to the VM's QMP socket (trying until {@code timeout}: QEMU makes it as it starts),
   * reads the greeting and leaves the capabilities negotiation.
   */
  static Qmp connect(Vm vm, Duration timeout, ScheduledExecutorService timers)
      throws IOException, InterruptedException {
    SocketChannel channel = connect(vm, vm.viaProc(Vm.QMP_SOCKET), timeout);
    Qmp qmp = new Qmp(channel, timers);
    try {
      qmp.within(timeout, () -> qmp.read(true));
      qmp.execute("qmp_capabilities", Map.of(), timeout);
      return qmp;
    } catch (IOException | RuntimeException e) {
      qmp.close();
      throw e;
    }
  }

  /** Connects to a socket QEMU listens on, trying every 50 ms until {@code timeout}. */
  static SocketChannel connect(Vm vm, Path socket, Duration timeout)
      throws IOException, InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      if (!vm.alive()) {
        throw new IOException("QEMU ended: " + vm.whyEnded());
      }
      SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
      try {
        channel.connect(UnixDomainSocketAddress.of(socket));
        return channel;
      } catch (IOException e) {
        channel.close();
        if (System.nanoTime() - deadline > 0) {
          throw new IOException("cannot reach QEMU's " + socket.getFileName() + ": " + e, e);
        }
        Thread.sleep(50);
      }
    }
  }

  /** Runs {@code command} and returns its {@code return} value; an {@code error} fails it. */
  JsonNode execute(String command, Map<String, ?> arguments, Duration timeout) throws IOException {
    ObjectNode request = JSON.createObjectNode().put("execute", command);
    if (!arguments.isEmpty()) {
      request.set("arguments", JSON.valueToTree(arguments));
    }
    byte[] line = (JSON.writeValueAsString(request) + "\n").getBytes(StandardCharsets.UTF_8);
    return within(
        timeout,
        () -> {
          ByteBuffer buffer = ByteBuffer.wrap(line);
          while (buffer.hasRemaining()) {
            channel.write(buffer);
          }
          JsonNode answer = read(false);
          if (answer.has("error")) {
            throw new IOException(
                "QMP " + command + ": " + answer.path("error").path("desc").asText());
          }
          return answer.path("return");
        });
  }

  /** The next object that is not an event: the greeting, or an answer. */
  private JsonNode read(boolean greeting) throws IOException {
    while (true) {
      JsonNode node = JSON.readTree(line());
      if (!node.has("event") && (greeting == node.has("QMP"))) {
        return node;
      }
    }
  }

  /** The next line, without its end; refused beyond {@link #MAX_LINE} bytes. */
  private String line() throws IOException {
    ByteArrayOutputStream line = new ByteArrayOutputStream();
    for (int b; (b = in.read()) != '\n'; ) {
      if (b < 0) {
        throw new IOException("QEMU closed its QMP socket");
      }
      if (line.size() == MAX_LINE) {
        throw new IOException("QEMU's QMP line is longer than " + MAX_LINE + " bytes");
      }
      line.write(b);
    }
    return line.toString(StandardCharsets.UTF_8);
  }

  private interface Call {
    JsonNode run() throws IOException;
  }

  private JsonNode within(Duration timeout, Call call) throws IOException {
    ScheduledFuture<?> closer =
        timers.schedule(this::close, timeout.toMillis(), TimeUnit.MILLISECONDS);
    try {
      return call.run();
    } catch (IOException e) {
      if (!channel.isOpen()) {
        throw new IOException("QEMU did not answer on QMP within " + timeout.toSeconds() + " s", e);
      }
      throw e;
    } finally {
      closer.cancel(false);
    }
  }

  @Override
  public void close() {
    try {
      channel.close();
    } catch (IOException e) {
      // Closed either way.
    }
  }
}
