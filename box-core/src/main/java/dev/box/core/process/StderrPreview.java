package dev.box.core.process;

import dev.box.api.time.Ticker;
import java.nio.charset.StandardCharsets;
import org.slf4j.Logger;

/**
 * The last characters of a process's stderr, and a rate-limited log of it (at most 4 chunks a
 * second, each at most 512 characters, with a count of what was suppressed), as the reference.
 */
final class StderrPreview {
  static final int MAX_CHARS = 4000;
  private static final int LOG_CHUNKS_PER_SECOND = 4;
  private static final int LOG_CHUNK_CHARS = 512;

  private final StringBuilder text = new StringBuilder();
  private final Logger log;
  private final String name;
  private final Ticker ticker;
  private long windowStart;
  private int loggedInWindow;
  private int suppressed;

  StderrPreview(Logger log, String name, Ticker ticker) {
    this.log = log;
    this.name = name;
    this.ticker = ticker;
    this.windowStart = ticker.read();
  }

  synchronized void append(byte[] bytes, int length) {
    String chunk = new String(bytes, 0, length, StandardCharsets.UTF_8);
    text.append(chunk);
    if (text.length() > MAX_CHARS) {
      text.delete(0, text.length() - MAX_CHARS);
    }
    logRateLimited(chunk);
  }

  private void logRateLimited(String chunk) {
    long now = ticker.read();
    if (now - windowStart >= 1_000_000_000L) {
      if (suppressed > 0) {
        log.info("managed process {} stderr: suppressed={}", name, suppressed);
      }
      windowStart = now;
      loggedInWindow = 0;
      suppressed = 0;
    }
    if (loggedInWindow < LOG_CHUNKS_PER_SECOND) {
      loggedInWindow++;
      String shown = chunk.length() > LOG_CHUNK_CHARS ? chunk.substring(0, LOG_CHUNK_CHARS) : chunk;
      log.info("managed process {} stderr: {}", name, shown.strip());
    } else {
      suppressed++;
    }
  }

  synchronized String text() {
    return text.toString();
  }
}
