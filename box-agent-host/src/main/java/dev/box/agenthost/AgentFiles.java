package dev.box.agenthost;

import dev.box.api.BoxException;
import dev.box.api.BoxFileWritten;
import dev.box.api.BoxSessionNotFoundException;
import dev.box.client.BoxFiles;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.function.Supplier;

/**
 * The files of an agent host's sessions as a model reads and writes them, through the server's
 * files API ({@link BoxFiles}), never through a command line: a write of any size up to the
 * server's {@code max_file_bytes}, and a read of at most {@link #MAX_READ_BYTES} cut for a model by
 * {@link OutputCut}, as every exec output is.
 *
 * <p>A write creates its session when it does not exist, with the spec an exec of the host would
 * create it with; a read requires it, so that a mistyped id is an error rather than an empty new
 * sandbox. Every failure is recorded in the host's {@link AgentHost#errors()} and thrown.
 */
public final class AgentFiles {
  /** The most bytes of a file a read takes; the rest is reported as truncated. */
  public static final int MAX_READ_BYTES = 1024 * 1024;

  private final AgentHost host;

  AgentFiles(AgentHost host) {
    this.host = host;
  }

  /**
   * The text of {@code path} (UTF-8) as a model should read it: its first {@link #MAX_READ_BYTES}
   * cut to {@code limit} characters, {@linkplain OutputCut#truncated() truncated} when either cut
   * anything.
   *
   * @param files the files API of the server the session lives on
   * @throws BoxException the server's error, such as {@code file_not_found}
   * @throws UncheckedIOException when the download broke off
   */
  public static OutputCut readText(BoxFiles files, String sessionId, String path, int limit) {
    byte[] bytes;
    boolean more;
    try (InputStream in = files.open(sessionId, path)) {
      bytes = in.readNBytes(MAX_READ_BYTES);
      more = in.read() >= 0;
    } catch (IOException e) {
      throw new UncheckedIOException("reading " + path + " failed: " + e.getMessage(), e);
    }
    OutputCut content = OutputCut.of(new String(bytes, StandardCharsets.UTF_8), limit);
    return more ? new OutputCut(content.text(), true) : content;
  }

  /**
   * Reads {@code path} of the session {@code sessionId}, cut to the host's output limit; see {@link
   * #readText}.
   */
  public OutputCut read(String sessionId, String path) {
    return recorded(
        sessionId, () -> readText(host.client().files(), sessionId, path, host.outputLimit()));
  }

  /**
   * Writes {@code content} (UTF-8) to {@code path} of the session {@code sessionId}, creating its
   * directories and the session, and replacing any file there.
   *
   * @throws BoxException the server's error, such as {@code payload_too_large} or {@code read_only}
   */
  public BoxFileWritten write(String sessionId, String path, String content) {
    byte[] bytes = content.getBytes(StandardCharsets.UTF_8);
    return recorded(
        sessionId,
        () -> {
          Supplier<BoxFileWritten> write =
              () -> host.client().files().write(sessionId, path, new ByteArrayInputStream(bytes));
          try {
            return write.get();
          } catch (BoxSessionNotFoundException e) {
            host.client().createSession(host.spec(sessionId, ExecRequest.of("")));
            return write.get();
          }
        });
  }

  private <T> T recorded(String sessionId, Supplier<T> action) {
    try {
      return action.get();
    } catch (RuntimeException e) {
      host.errors().record(e, sessionId);
      throw e;
    }
  }
}
