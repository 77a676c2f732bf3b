package dev.box.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Floor 3 of the relay round trip: a plain {@code cat} child of this JVM, no sandbox, no server, no
 * socket. {@link #echo} writes a line to its stdin and reads the line back from its stdout, which
 * is what the relay does for a WebSocket client. Not thread-safe.
 */
final class CatFloor implements AutoCloseable {
  private static final long EXIT_TIMEOUT_SECONDS = 10;

  private final Process process;
  private final OutputStream stdin;
  private final BufferedReader stdout;

  private CatFloor(Process process) {
    this.process = process;
    this.stdin = process.getOutputStream();
    this.stdout =
        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
  }

  /** Starts {@code cat} with its stderr discarded. */
  static CatFloor start() throws IOException {
    return new CatFloor(
        ProcessFloors.builder(List.of("cat"))
            .redirectInput(ProcessBuilder.Redirect.PIPE)
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .start());
  }

  /**
   * Writes {@code line} and a newline to cat's stdin and returns the next line of its stdout.
   *
   * @throws IllegalStateException when cat's stdout ended
   */
  String echo(String line) throws IOException {
    stdin.write((line + "\n").getBytes(StandardCharsets.UTF_8));
    stdin.flush();
    String back = stdout.readLine();
    if (back == null) {
      throw new IllegalStateException("cat's stdout ended");
    }
    return back;
  }

  /** Closes cat's stdin and waits for it to exit; kills it when it does not in time. */
  @Override
  public void close() throws IOException, InterruptedException {
    try {
      stdin.close();
      if (!process.waitFor(EXIT_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
        throw new IllegalStateException("cat did not exit within " + EXIT_TIMEOUT_SECONDS + " s");
      }
    } finally {
      process.destroyForcibly();
      stdout.close();
    }
  }
}
