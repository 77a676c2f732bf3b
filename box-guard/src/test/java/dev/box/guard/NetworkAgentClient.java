package dev.box.guard;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.jspecify.annotations.Nullable;

/**
 * The server's side of {@code box-agent --listen}, as small as the tests need: it dials the agent
 * on loopback, sends the header of a control or a stream connection, and writes and reads frames.
 * Every socket it opens is added to {@code opened}, for the test to close.
 */
final class NetworkAgentClient {
  /** How long a read may wait for the agent before the test fails. */
  private static final int READ_TIMEOUT_MS = 30_000;

  private final int port;
  private final byte[] secret;
  private final List<AutoCloseable> opened;

  NetworkAgentClient(int port, byte[] secret, List<AutoCloseable> opened) {
    this.port = port;
    this.secret = secret.clone();
    this.opened = opened;
  }

  /** One frame from the agent: its type, its id and its second field (each 0 when it has none). */
  record Frame(char type, int id, int value) {}

  /** A process the agent forked and let run, with its keeper's pid and its streams. */
  record Started(int keeper, Socket out, Socket err, @Nullable Socket in) {}

  /** The stream connections of one process, dialled anew for a reattached held process. */
  record Streams(Socket out, Socket err, @Nullable Socket in) {}

  /**
   * A connection that starts with the header "BOXA", {@code key}, {@code kind}, then {@code rest}.
   */
  Socket dial(byte[] key, char kind, byte[] rest) throws IOException {
    Socket socket = new Socket(InetAddress.getLoopbackAddress(), port);
    opened.add(socket);
    socket.setSoTimeout(READ_TIMEOUT_MS);
    // As the server's: a frame is sent at once, not held back behind the previous one's ack.
    socket.setTcpNoDelay(true);
    DataOutputStream out = new DataOutputStream(socket.getOutputStream());
    out.write("BOXA".getBytes(StandardCharsets.US_ASCII));
    out.write(key);
    out.writeByte(kind);
    out.write(rest);
    out.flush();
    return socket;
  }

  /** A new control connection, whose hello has not been read yet. */
  Control control() throws IOException {
    return new Control(dial(secret, 'C', new byte[0]));
  }

  /** Stream {@code fd} of process {@code id} with {@code token}. */
  Socket stream(int id, byte[] token, int fd) throws IOException {
    return dial(secret, 'O', ByteBuffer.allocate(13).putInt(id).put(token).put((byte) fd).array());
  }

  /**
   * Spawns {@code argv} as process {@code id} of {@code control}, dials its streams and lets it go.
   */
  Started start(Control control, int id, boolean stdin, String... argv) throws IOException {
    return start(control, id, token(), stdin ? 1 : 0, argv);
  }

  /**
   * Spawns {@code argv} as held process {@code id} of {@code control} with {@code token}, dials its
   * streams and lets it go: the agent relays them through pipes of its own.
   */
  Started startHeld(Control control, int id, byte[] token, boolean stdin, String... argv)
      throws IOException {
    return start(control, id, token, stdin ? 3 : 2, argv);
  }

  /**
   * Spawns {@code argv} as process {@code id} of {@code control} on a terminal of {@code cols} by
   * {@code rows}, dials its streams and lets it go: the agent relays the terminal.
   */
  Started startTerminal(Control control, int id, int cols, int rows, String... argv)
      throws IOException {
    byte[] token = token();
    control.spawn(id, token, TERMINAL, terminalSize(cols, rows), argv);
    return started(control, id, token, TERMINAL);
  }

  private Started start(Control control, int id, byte[] token, int flags, String... argv)
      throws IOException {
    control.spawn(id, token, flags, argv);
    return started(control, id, token, flags);
  }

  /** Dials the streams of spawned process {@code id} and lets it go once the agent forked it. */
  private Started started(Control control, int id, byte[] token, int flags) throws IOException {
    Streams streams = streams(id, token, (flags & 1) != 0);
    Frame pid = control.next();
    if (pid.type() != 'P' || pid.id() != id) {
      throw new IOException("expected P for " + id + ", got " + pid);
    }
    control.send('G', id);
    return new Started(pid.value(), streams.out(), streams.err(), streams.in());
  }

  /**
   * Dials stdout, stderr and, when {@code stdin}, stdin of process {@code id} with {@code token}.
   */
  Streams streams(int id, byte[] token, boolean stdin) throws IOException {
    Socket out = stream(id, token, 1);
    Socket err = stream(id, token, 2);
    return new Streams(out, err, stdin ? stream(id, token, 0) : null);
  }

  /** The flags of a terminal's spawn: a terminal, with stdin. */
  static final int TERMINAL = 5;

  /** The size of a terminal as a spawn frame carries it after the flags. */
  static byte[] terminalSize(int cols, int rows) {
    return ByteBuffer.allocate(4).putShort((short) cols).putShort((short) rows).array();
  }

  /** A fresh random token for a spawn. */
  static byte[] token() {
    byte[] token = new byte[8];
    ThreadLocalRandom.current().nextBytes(token);
    return token;
  }

  /** Everything a stream connection carries until its end. */
  static String readAll(Socket stream) throws IOException {
    return new String(stream.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
  }

  /** One control connection to the agent. */
  static final class Control {
    private final Socket socket;
    private final DataInputStream in;
    private final DataOutputStream out;

    Control(Socket socket) throws IOException {
      this.socket = socket;
      this.in = new DataInputStream(socket.getInputStream());
      this.out = new DataOutputStream(socket.getOutputStream());
    }

    /** The next frame from the agent. */
    Frame next() throws IOException {
      ByteBuffer frame = nextBody();
      char type = (char) frame.get();
      int id = frame.remaining() >= 4 ? frame.getInt() : 0;
      return new Frame(type, id, frame.remaining() >= 4 ? frame.getInt() : 0);
    }

    /**
     * The next frame, which must be 'W' of process {@code id}: how many stdout bytes the agent
     * wrote to the process's earlier stdout connections.
     */
    long written(int id) throws IOException {
      ByteBuffer frame = nextBody();
      if (frame.remaining() != 13 || frame.get() != 'W' || frame.getInt() != id) {
        throw new IOException("expected W for " + id);
      }
      return frame.getLong();
    }

    private ByteBuffer nextBody() throws IOException {
      byte[] body = new byte[in.readInt()];
      in.readFully(body);
      return ByteBuffer.wrap(body);
    }

    /** Sends a frame of {@code type} without a payload. */
    void send(char type) throws IOException {
      out.writeInt(1);
      out.writeByte(type);
      out.flush();
    }

    /** Sends a frame of {@code type} whose payload is {@code id}. */
    void send(char type, int id) throws IOException {
      out.writeInt(5);
      out.writeByte(type);
      out.writeInt(id);
      out.flush();
    }

    /** Sends 'Z': the terminal of process {@code id} is {@code cols} by {@code rows} now. */
    void resize(int id, int cols, int rows) throws IOException {
      out.writeInt(9);
      out.writeByte('Z');
      out.writeInt(id);
      out.write(terminalSize(cols, rows));
      out.flush();
    }

    /** Sends 'R': take over the orphaned held process of {@code token} as {@code id}. */
    void reattach(int id, byte[] token) throws IOException {
      out.writeInt(13);
      out.writeByte('R');
      out.writeInt(id);
      out.write(token);
      out.flush();
    }

    /** Sends the spawn of {@code argv} as process {@code id}, with a plain PATH. */
    void spawn(int id, byte[] token, boolean stdin, String... argv) throws IOException {
      spawn(id, token, stdin ? 1 : 0, argv);
    }

    /** Sends the spawn of {@code argv} with {@code flags} (1: stdin, 2: held). */
    void spawn(int id, byte[] token, int flags, String... argv) throws IOException {
      spawn(id, token, flags, new byte[0], argv);
    }

    /**
     * Sends the spawn of {@code argv} with {@code flags} and, right after them, {@code extra} (the
     * size of a terminal).
     */
    void spawn(int id, byte[] token, int flags, byte[] extra, String... argv) throws IOException {
      ByteArrayOutputStream body = new ByteArrayOutputStream();
      DataOutputStream frame = new DataOutputStream(body);
      frame.writeByte('S');
      frame.writeInt(id);
      frame.write(token);
      frame.writeByte(flags);
      frame.write(extra);
      writeStrings(frame, List.of(argv));
      writeStrings(frame, List.of("PATH=/usr/bin:/bin"));
      out.writeInt(body.size());
      body.writeTo(out);
      out.flush();
    }

    private static void writeStrings(DataOutputStream frame, List<String> strings)
        throws IOException {
      frame.writeInt(strings.size());
      for (String s : strings) {
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        frame.writeInt(bytes.length);
        frame.write(bytes);
      }
    }

    /** Whether the agent closed this connection (after whatever it had still to say). */
    boolean closedByAgent() throws IOException {
      InputStream stream = socket.getInputStream();
      return stream.read() < 0;
    }

    /** Closes the connection from this side. */
    void close() throws IOException {
      socket.close();
    }
  }
}
