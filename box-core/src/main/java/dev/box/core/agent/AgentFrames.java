package dev.box.core.agent;

import dev.box.api.BoxValidationException;
import dev.box.core.backend.ProcessSpec;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/** The requests the server sends an exec agent (the frame format is in {@code box-agent.c}). */
final class AgentFrames {
  private AgentFrames() {}

  /**
   * Starts {@code argv} with {@code env}; stdin is a stream of its own when asked; a held process's
   * stdio goes through the agent, which keeps it for a later {@link #reattach} (network mode); a
   * process on a terminal has stdin, and the agent relays the terminal.
   */
  static byte[] spawn(
      int id,
      byte[] token,
      boolean stdin,
      boolean held,
      ProcessSpec.@Nullable Terminal terminal,
      List<String> argv,
      Map<String, String> env) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(256);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeInt(0);
      out.writeByte('S');
      out.writeInt(id);
      out.write(token);
      out.writeByte((stdin ? 1 : 0) | (held ? 2 : 0) | (terminal != null ? 4 : 0));
      if (terminal != null) {
        out.writeShort(terminal.cols());
        out.writeShort(terminal.rows());
      }
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

  /** Closes the stdin of held process {@code id} after what its stdin stream carried. */
  static byte[] inputEnd(int id) {
    return small('I', id);
  }

  /** Takes over, as process {@code id}, the held process that was spawned with {@code token}. */
  static byte[] reattach(int id, byte[] token) {
    return ByteBuffer.allocate(17).putInt(13).put((byte) 'R').putInt(id).put(token).array();
  }

  /** Sets the size of the terminal of process {@code id}. */
  static byte[] resize(int id, ProcessSpec.Terminal size) {
    return ByteBuffer.allocate(13)
        .putInt(9)
        .put((byte) 'Z')
        .putInt(id)
        .putShort((short) size.cols())
        .putShort((short) size.rows())
        .array();
  }

  /** Kills the trees of every process, of every control (network mode). */
  static byte[] endAll() {
    return withLength(new byte[] {0, 0, 0, 0, (byte) 'A'});
  }

  private static byte[] small(char type, int id) {
    return ByteBuffer.allocate(9).putInt(5).put((byte) type).putInt(id).array();
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
