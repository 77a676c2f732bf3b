package dev.box.e2b.server;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.jspecify.annotations.Nullable;

/** The messages of envd's process streams, {@code {"event":{...}}}, in Connect's JSON mapping. */
final class ProcessEvents {
  private ProcessEvents() {}

  /** {@code start}: the first message of every stream, naming the process. */
  static ObjectNode start(ObjectMapper mapper, int pid) {
    ObjectNode message = mapper.createObjectNode();
    message.putObject("event").putObject("start").put("pid", pid);
    return message;
  }

  /** {@code data}: output of {@code stream} ({@code stdout} or {@code stderr}), as base64. */
  static ObjectNode data(ObjectMapper mapper, String stream, byte[] bytes) {
    ObjectNode message = mapper.createObjectNode();
    message.putObject("event").putObject("data").put(stream, bytes);
    return message;
  }

  /** {@code keepalive}: sent while nothing else is, so that the connection stays in use. */
  static ObjectNode keepalive(ObjectMapper mapper) {
    ObjectNode message = mapper.createObjectNode();
    message.putObject("event").putObject("keepalive");
    return message;
  }

  /**
   * {@code end}: the process exited with {@code exitCode} (128+N after signal N), or was killed for
   * {@code killedBy}.
   */
  static ObjectNode end(ObjectMapper mapper, int exitCode, @Nullable String killedBy) {
    ObjectNode message = mapper.createObjectNode();
    ObjectNode end = message.putObject("event").putObject("end");
    end.put("exitCode", exitCode);
    end.put("exited", killedBy == null);
    end.put("status", killedBy == null ? "exit status " + exitCode : "signal: killed");
    if (killedBy != null) {
      end.put("error", killedBy);
    }
    return message;
  }
}
