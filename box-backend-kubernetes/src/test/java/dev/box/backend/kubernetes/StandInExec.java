package dev.box.backend.kubernetes;

import io.fabric8.mockwebserver.http.ByteString;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.fabric8.mockwebserver.http.Response;
import io.fabric8.mockwebserver.http.WebSocket;
import io.fabric8.mockwebserver.http.WebSocketListener;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * The API server stand-in's {@code pods/exec} subresource, for tests: fabric8's mock server answers
 * exec only with canned frames, so this runs the command for real, as a kubelet would, through
 * {@link Runner} (the stand-in kubelet's {@code docker exec -i}), and carries its stdio over the
 * WebSocket in the {@code v4.channel.k8s.io} protocol the client speaks: each binary message one
 * channel byte (0 stdin, 1 stdout, 2 stderr, 3 the final Status, 4 resize) and data. The end of the
 * WebSocket closes the command's stdin and nothing more, as a kubelet does; what is still running
 * when the API server stops is killed.
 */
final class StandInExec {
  private static final Pattern EXEC =
      Pattern.compile("/api/v1/namespaces/([^/]+)/pods/([^/]+)/exec\\?(.*)");

  /** Runs a command in a container of a pod. */
  @FunctionalInterface
  interface Runner {
    /** Starts {@code command} in container {@code container} of pod {@code pod}. */
    Process start(String namespace, String pod, String container, List<String> command)
        throws IOException;
  }

  private final Set<Process> running = ConcurrentHashMap.newKeySet();
  private volatile @Nullable Runner runner;

  /** Runs the commands of later execs with {@code runner}. */
  void serveWith(Runner runner) {
    this.runner = runner;
  }

  /** The answer to {@code request} if it is an exec, else null. */
  @Nullable MockResponse answer(RecordedRequest request) {
    Matcher exec = EXEC.matcher(request.getPath());
    if (!"GET".equals(request.getMethod()) || !exec.matches()) {
      return null;
    }
    Runner current = runner;
    if (current == null) {
      return status(404, "NotFound", "no kubelet runs this pod's commands");
    }
    List<String> command = new ArrayList<>();
    String container = "";
    for (String pair : exec.group(3).split("&")) {
      int eq = pair.indexOf('=');
      String key = eq < 0 ? pair : pair.substring(0, eq);
      String value =
          eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
      if (key.equals("command")) {
        command.add(value);
      } else if (key.equals("container")) {
        container = value;
      }
    }
    if (command.isEmpty()) {
      return status(400, "BadRequest", "you must specify at least 1 command");
    }
    return new MockResponse()
        .setHeader("Sec-WebSocket-Protocol", "v4.channel.k8s.io")
        .withWebSocketUpgrade(
            new Session(current, exec.group(1), exec.group(2), container, command));
  }

  /** Kills what is still running. */
  void close() {
    running.forEach(Process::destroyForcibly);
  }

  private static MockResponse status(int code, String reason, String message) {
    return new MockResponse()
        .setResponseCode(code)
        .setBody(
            "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"reason\":\""
                + reason
                + "\",\"code\":"
                + code
                + ",\"message\":\""
                + message
                + "\"}");
  }

  /** One exec: its command, and the WebSocket that carries its stdio. */
  private final class Session extends WebSocketListener {
    private final Runner runner;
    private final String namespace;
    private final String pod;
    private final String container;
    private final List<String> command;
    private volatile @Nullable Process process;

    Session(Runner runner, String namespace, String pod, String container, List<String> command) {
      this.runner = runner;
      this.namespace = namespace;
      this.pod = pod;
      this.container = container;
      this.command = command;
    }

    @Override
    public void onOpen(WebSocket socket, Response response) {
      Process started;
      try {
        started = runner.start(namespace, pod, container, command);
      } catch (IOException e) {
        finish(socket, "{\"status\":\"Failure\",\"message\":\"" + e.getMessage() + "\"}");
        return;
      }
      process = started;
      running.add(started);
      Thread out = Thread.ofVirtual().start(() -> copy(started.getInputStream(), 1, socket));
      Thread err = Thread.ofVirtual().start(() -> copy(started.getErrorStream(), 2, socket));
      Thread.ofVirtual()
          .start(
              () -> {
                try {
                  int code = started.waitFor();
                  out.join();
                  err.join();
                  running.remove(started);
                  finish(
                      socket,
                      code == 0
                          ? "{\"metadata\":{},\"status\":\"Success\"}"
                          : "{\"metadata\":{},\"status\":\"Failure\",\"reason\":\"NonZeroExitCode\","
                              + "\"details\":{\"causes\":[{\"reason\":\"ExitCode\",\"message\":\""
                              + code
                              + "\"}]}}");
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              });
    }

    @Override
    public void onMessage(WebSocket socket, ByteString bytes) {
      onMessage(socket, bytes.toByteArray());
    }

    @Override
    public void onMessage(WebSocket socket, byte[] bytes) {
      Process current = process;
      if (current == null || bytes.length == 0 || bytes[0] != 0) {
        return;
      }
      try {
        OutputStream stdin = current.getOutputStream();
        stdin.write(bytes, 1, bytes.length - 1);
        stdin.flush();
      } catch (IOException e) {
        // The command closed its stdin: what it is sent now is lost, as on a node.
      }
    }

    @Override
    public void onClosing(WebSocket socket, int code, String reason) {
      closeStdin();
    }

    @Override
    public void onClosed(WebSocket socket, int code, String reason) {
      closeStdin();
    }

    @Override
    public void onFailure(WebSocket socket, Throwable failure, @Nullable Response response) {
      closeStdin();
    }

    private void closeStdin() {
      Process current = process;
      if (current != null) {
        try {
          current.getOutputStream().close();
        } catch (IOException e) {
          // Already closed.
        }
      }
    }

    private void copy(InputStream from, int channel, WebSocket socket) {
      byte[] buffer = new byte[32 * 1024];
      try {
        for (int n; (n = from.read(buffer, 1, buffer.length - 1)) >= 0; ) {
          buffer[0] = (byte) channel;
          synchronized (this) {
            socket.send(Arrays.copyOf(buffer, n + 1));
          }
        }
      } catch (IOException e) {
        // The command ended.
      }
    }

    private void finish(WebSocket socket, String status) {
      byte[] json = status.getBytes(StandardCharsets.UTF_8);
      byte[] message = new byte[json.length + 1];
      message[0] = 3;
      System.arraycopy(json, 0, message, 1, json.length);
      synchronized (this) {
        socket.send(message);
        socket.close(1000, "");
      }
    }
  }
}
