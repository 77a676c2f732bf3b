package dev.box.core.agent;

import dev.box.api.BoxValidationException;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/** The requests the server sends an exec agent (the frame format is in {@code box-agent.c}). */
final class AgentFrames {
  private AgentFrames() {}

  /** Starts {@code argv} with {@code env}; stdin is a stream of its own when asked. */
  static byte[] spawn(
      int id, byte[] token, boolean stdin, List<String> argv, Map<String, String> env) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(256);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeInt(0);
      out.writeByte('S');
      out.writeInt(id);
      out.write(token);
      out.writeByte(stdin ? 1 : 0);
      out.writeInt(argv.size());
      for (String word : argv) {
        writeWord(out, word);
      }
      out.writeInt(env.size());
      for (Map.Entry<String, String> e : env.entrySet()) {
        writeWord(out, e.getKey() + "=" + e.getValue());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    byte[] frame = bytes.toByteArray();
    if (frame.length - 4 > AgentLink.MAX_REQUEST) {
      throw new BoxValidationException(
          "the command and its environment are larger than "
              + (AgentLink.MAX_REQUEST >> 20)
              + " MiB");
    }
    return withLength(frame);
  }

  /** Lets process {@code id} exec. */
  static byte[] go(int id) {
    return small('G', id);
  }

  /** Kills process {@code id} before it runs. */
  static byte[] cancel(int id) {
    return small('C', id);
  }

  /** Kills the tree of process {@code id} (network mode). */
  static byte[] kill(int id) {
    return small('K', id);
  }

  /** Kills the trees of every process, of every control (network mode). */
  static byte[] endAll() {
    return withLength(new byte[] {0, 0, 0, 0, (byte) 'A'});
  }

  private static byte[] small(char type, int id) {
    return withLength(
        new byte[] {
          0,
          0,
          0,
          0,
          (byte) type,
          (byte) (id >>> 24),
          (byte) (id >>> 16),
          (byte) (id >>> 8),
          (byte) id
        });
  }

  private static void writeWord(DataOutputStream out, String word) throws IOException {
    byte[] bytes = word.getBytes(StandardCharsets.UTF_8);
    for (byte b : bytes) {
      if (b == 0) {
        throw new BoxValidationException(
            "a command, its arguments and its environment may not contain NUL");
      }
    }
    out.writeInt(bytes.length);
    out.write(bytes);
  }

  private static byte[] withLength(byte[] frame) {
    int n = frame.length - 4;
    frame[0] = (byte) (n >>> 24);
    frame[1] = (byte) (n >>> 16);
    frame[2] = (byte) (n >>> 8);
    frame[3] = (byte) n;
    return frame;
  }
}
