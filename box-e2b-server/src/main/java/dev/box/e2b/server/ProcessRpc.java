package dev.box.e2b.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.box.core.backend.ProcessSpec;
import dev.box.core.backend.SandboxProcess;
import dev.box.core.session.ProcessManager;
import io.javalin.http.Context;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.Base64;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.jspecify.annotations.Nullable;

/**
 * envd's {@code process.Process} service on a sandbox, over Connect's JSON codec: the streams
 * {@code Start} and {@code Connect}, and the unary {@code List}, {@code SendInput}, {@code
 * CloseStdin}, {@code SendSignal}, {@code Update}. Each process is spawned in the sandbox's session
 * ({@link ProcessManager#spawn}): it is the session's activity and ends with it. A {@code pty} in
 * {@code Start} runs it on a terminal of the sandbox ({@link ProcessSpec.Terminal}): its output is
 * then {@code pty} data, {@code SendInput}'s {@code pty} is typed into it and {@code Update}
 * resizes it. The client stream {@code StreamInput} writes each message's input as it comes.
 *
 * <p>{@code Connect-Timeout-Ms} on {@code Start} is the command's time: then its tree is killed and
 * its streams end with {@code deadline_exceeded}. On {@code Connect} it bounds that stream only. A
 * client that goes away never ends a process. Streams send a keepalive while idle, every {@code
 * Keepalive-Ping-Interval} seconds, at most every {@link #MAX_KEEPALIVE} (within the HTTP server's
 * idle timeout).
 */
final class ProcessRpc implements AutoCloseable {
  /** The calls answered as server streams. */
  static final Set<String> STREAMS = Set.of("Start", "Connect");

  /** The client stream: input to a process, message by message. */
  static final String CLIENT_STREAM = "StreamInput";

  /** The longest wait between two messages of a stream. */
  static final Duration MAX_KEEPALIVE = Duration.ofSeconds(25);

  private final ProcessManager processes;
  private final ObjectMapper mapper;
  private final Clock clock;
  private final ScheduledExecutorService timer =
      Executors.newSingleThreadScheduledExecutor(
          Thread.ofPlatform().name("box-e2b-process-timeouts").daemon().factory());

  ProcessRpc(ProcessManager processes, ObjectMapper mapper, Clock clock) {
    this.processes = processes;
    this.mapper = mapper;
    this.clock = clock;
  }

  /**
   * Serves the stream {@code method} ({@link #STREAMS}) of {@code sandbox} on {@code stream} until
   * it ends.
   *
   * @throws ConnectStream.Gone when the client went away
   * @throws ConnectError the refusal, for the stream's end
   */
  void stream(
      Context ctx, E2bSandbox sandbox, String method, JsonNode request, ConnectStream stream)
      throws IOException, InterruptedException {
    Duration keepalive = keepalive(ctx.header("Keepalive-Ping-Interval"));
    @Nullable Duration timeout = timeout(ctx.header("Connect-Timeout-Ms"));
    ProcessTable table = sandbox.processes();
    ProcessWatcher watcher = new ProcessWatcher();
    table.watching();
    try {
      if (method.equals("Start")) {
        ProcessConfig config = ProcessConfig.read(request);
        SandboxLog log = sandbox.log();
        E2bProcess process =
            table.start(
                pid -> {
                  SandboxProcess spawned =
                      processes.spawn(sandbox.sessionId(), config.spec(sandbox.envVars()));
                  log.started(clock.instant(), pid, config);
                  return E2bProcess.relay(
                      pid,
                      config,
                      spawned,
                      mapper,
                      watcher,
                      ended -> {
                        table.remove(ended);
                        log.ended(clock.instant(), ended);
                      });
                });
        if (timeout != null) {
          process.expireAfter(timer, timeout);
        }
        serve(stream, process, watcher, keepalive, null);
      } else {
        E2bProcess process = table.find(request);
        if (!process.watch(watcher)) {
          throw ConnectError.notFound("process " + process.pid() + " has ended");
        }
        serve(stream, process, watcher, keepalive, timeout);
      }
    } finally {
      table.unwatched();
    }
  }

  /**
   * Sends {@code process}'s start, then what {@code watcher} hears, then its end; a {@code timeout}
   * ends the stream first with {@code deadline_exceeded}.
   */
  private void serve(
      ConnectStream stream,
      E2bProcess process,
      ProcessWatcher watcher,
      Duration keepalive,
      @Nullable Duration timeout)
      throws IOException, InterruptedException {
    long deadline = timeout == null ? Long.MAX_VALUE : System.nanoTime() + timeout.toNanos();
    try {
      stream.send(ProcessEvents.start(mapper, process.pid()));
      while (true) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          stream.end(
              new ConnectError(
                  "deadline_exceeded",
                  "the stream ran out of time (Connect-Timeout-Ms); process "
                      + process.pid()
                      + " runs on"));
          return;
        }
        switch (watcher.next(Math.min(left, keepalive.toNanos()))) {
          case null -> {
            if (deadline - System.nanoTime() > 0) {
              stream.send(ProcessEvents.keepalive(mapper));
            }
          }
          case ProcessWatcher.Output output -> stream.send(output.event());
          case ProcessWatcher.Ended ended -> {
            stream.send(ended.event());
            stream.end(ended.error());
            return;
          }
        }
      }
    } finally {
      process.unwatch(watcher);
    }
  }

  /**
   * Serves {@code StreamInput}: {@code first} is its start event, naming the process; every later
   * message is input to it ({@code data}, as {@code SendInput}'s) or a keepalive, written as it
   * comes; the answer, once the client's stream has ended, is one empty message.
   *
   * @throws ConnectError the refusal, for the stream's end
   */
  void streamInput(E2bSandbox sandbox, JsonNode first, ConnectStream stream) throws IOException {
    if (!first.path("start").isObject()) {
      throw ConnectError.invalidArgument(
          "StreamInput starts with a start event naming the process");
    }
    E2bProcess process = sandbox.processes().find(first.path("start"));
    for (JsonNode message = stream.next(); message != null; message = stream.next()) {
      if (message.path("data").isObject()) {
        write(process, message.path("data").path("input"));
      } else if (!message.path("keepalive").isObject()) {
        throw ConnectError.invalidArgument("after start, StreamInput sends data or keepalive");
      }
    }
    stream.send(mapper.createObjectNode());
    stream.end(null);
  }

  /** Writes {@code input} ({@code {"stdin"}} or {@code {"pty"}}, base64) to {@code process}. */
  private static void write(E2bProcess process, JsonNode input) {
    if (input.has("pty")) {
      process.writePty(bytes(input.path("pty"), "input.pty"));
    } else {
      process.writeStdin(bytes(input.path("stdin"), "input.stdin"));
    }
  }

  /** Answers the unary {@code method} with {@code request} on {@code sandbox}. */
  ObjectNode call(E2bSandbox sandbox, String method, JsonNode request) {
    ProcessTable table = sandbox.processes();
    ObjectNode answer = mapper.createObjectNode();
    switch (method) {
      case "List" -> {
        ArrayNode list = answer.putArray("processes");
        for (E2bProcess process : table.list()) {
          ObjectNode entry = list.addObject();
          entry.set("config", process.config().json(mapper));
          entry.put("pid", process.pid());
          if (process.config().tag() != null) {
            entry.put("tag", process.config().tag());
          }
        }
      }
      case "SendInput" -> {
        write(table.find(request), request.path("input"));
      }
      case "CloseStdin" -> table.find(request).closeStdin();
      case "SendSignal" -> {
        boolean kill = kill(request.path("signal"));
        table.find(request).signal(kill);
      }
      case "Update" -> {
        ProcessSpec.Terminal size = ProcessConfig.size(request.path("pty"));
        if (size == null) {
          throw ConnectError.invalidArgument("Update needs pty.size: a PTY's new size");
        }
        table.find(request).resize(size);
      }
      case CLIENT_STREAM ->
          throw ConnectError.invalidArgument(
              "StreamInput is a client stream: send it as application/connect+json");
      case "Start", "Connect" ->
          throw ConnectError.invalidArgument(
              method + " is a server stream: send it as application/connect+json");
      default -> throw new ConnectError("unimplemented", "no method process.Process/" + method);
    }
    return answer;
  }

  /** Whether {@code signal} is SIGKILL (true) or SIGTERM (false), by name or number. */
  private static boolean kill(JsonNode signal) {
    String name = signal.asText();
    if (name.equals("SIGNAL_SIGKILL") || name.equals("9")) {
      return true;
    }
    if (name.equals("SIGNAL_SIGTERM") || name.equals("15")) {
      return false;
    }
    throw ConnectError.invalidArgument(
        "signal must be SIGNAL_SIGKILL or SIGNAL_SIGTERM, not '" + name + "'");
  }

  private static byte[] bytes(JsonNode node, String field) {
    if (!node.isTextual()) {
      throw ConnectError.invalidArgument(field + " is required and must be base64");
    }
    String text = node.asText();
    try {
      return text.indexOf('-') >= 0 || text.indexOf('_') >= 0
          ? Base64.getUrlDecoder().decode(text)
          : Base64.getDecoder().decode(text);
    } catch (IllegalArgumentException e) {
      throw ConnectError.invalidArgument(field + " is not base64");
    }
  }

  /** The keepalive interval {@code header} asks for, at most {@link #MAX_KEEPALIVE}. */
  static Duration keepalive(@Nullable String header) {
    if (header == null || !header.strip().matches("[0-9]{1,6}")) {
      return MAX_KEEPALIVE;
    }
    long seconds = Long.parseLong(header.strip());
    return seconds < 1
        ? MAX_KEEPALIVE
        : Duration.ofSeconds(Math.min(seconds, MAX_KEEPALIVE.toSeconds()));
  }

  /**
   * The call's {@code Connect-Timeout-Ms}: null when absent or 0 (no deadline).
   *
   * @throws ConnectError {@code invalid_argument} for anything but up to 10 digits
   */
  static @Nullable Duration timeout(@Nullable String header) {
    if (header == null) {
      return null;
    }
    if (!header.matches("[0-9]{1,10}")) {
      throw ConnectError.invalidArgument("Connect-Timeout-Ms must be up to 10 digits");
    }
    long millis = Long.parseLong(header);
    return millis == 0 ? null : Duration.ofMillis(millis);
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
