package dev.box.langbot;

import com.fasterxml.jackson.core.JsonProcessingException;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The control channel over a child process's stdin and stdout, framed by {@link StdioFraming}.
 * Nothing else may write to {@code out}: one stray byte breaks the protocol.
 */
public final class StdioControl {
  private static final Logger log = LoggerFactory.getLogger(StdioControl.class);

  private final LangBotControl control;
  private final InputStream in;
  private final OutputStream out;

  /** A channel reading requests from {@code in} and writing responses to {@code out}. */
  public StdioControl(LangBotControl control, InputStream in, OutputStream out) {
    this.control = control;
    this.in = in;
    this.out = out;
  }

  /** Serves until {@code in} ends; blocks the calling thread. */
  public void run() throws IOException {
    StdioFraming writer = new StdioFraming(control.mapper());
    StdioFraming reader = new StdioFraming(control.mapper());
    try (ControlConnection connection = control.open(message -> write(writer, message))) {
      BufferedReader lines =
          new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8), 1 << 16);
      String line;
      while ((line = lines.readLine()) != null) {
        if (line.isBlank()) {
          continue;
        }
        @Nullable String message;
        try {
          message = reader.decode(line);
        } catch (JsonProcessingException e) {
          log.warn("ignoring malformed stdio control line: {}", e.getOriginalMessage());
          continue;
        }
        if (message != null) {
          connection.onText(message);
        }
      }
      log.info("stdin closed: the stdio control channel ends");
    }
  }

  private void write(StdioFraming framing, String message) throws IOException {
    StringBuilder text = new StringBuilder(message.length() + 256);
    for (String line : framing.encode(message)) {
      text.append(line).append('\n');
    }
    out.write(text.toString().getBytes(StandardCharsets.UTF_8));
    out.flush();
  }
}
