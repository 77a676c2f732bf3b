package dev.box.server.http;

import jakarta.servlet.http.HttpServletRequest;
import java.io.BufferedReader;
import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells when the client of a request that answers as it runs has closed its TCP connection, also
 * while nothing is written to it. A failed write is how a server otherwise learns that its client
 * is gone, and a command that is silent writes nothing, so it would run on to its timeout.
 *
 * <p>The kernel's tables of TCP sockets ({@code /proc/net/tcp} and {@code /proc/net/tcp6}) show the
 * server's end of a connection that the client closed in CLOSE_WAIT, and no longer show one the
 * client reset. While anything is watched, one virtual thread reads both tables every {@link
 * #POLL}; a watched connection that is not ESTABLISHED in them is gone. A client that only shuts
 * its sending side down (a half-close, which HTTP/1.1 clients do not do while they wait for an
 * answer) counts as gone. Where the tables cannot be read, nothing is ever told gone: the next
 * failed write still ends the command.
 */
final class ClientDisconnects {
  private static final Logger log = LoggerFactory.getLogger(ClientDisconnects.class);
  private static final Duration POLL = Duration.ofMillis(500);
  private static final String ESTABLISHED = "01";

  /** A connection watched until it is closed. */
  interface Watch extends AutoCloseable {
    @Override
    void close();
  }

  /** The server's end of one TCP connection, as a request sees it. */
  record Connection(int localPort, InetAddress remote, int remotePort) {
    /** The connection {@code request} came on; null when its addresses are not IP literals. */
    static @Nullable Connection of(HttpServletRequest request) {
      String remote = request.getRemoteAddr();
      int scope = remote.indexOf('%');
      String literal =
          (scope < 0 ? remote : remote.substring(0, scope)).replace("[", "").replace("]", "");
      if (!literal.matches("[0-9a-fA-F.:]+")) {
        return null;
      }
      try {
        // A literal of digits, dots and colons is parsed, never looked up.
        return new Connection(
            request.getLocalPort(), InetAddress.getByName(literal), request.getRemotePort());
      } catch (UnknownHostException e) {
        return null;
      }
    }

    private long ports() {
      return (long) localPort << 16 | remotePort;
    }
  }

  private final List<Path> tables;
  private final Map<Connection, Runnable> watched = new HashMap<>();
  private boolean polling;

  /** Watches through the kernel's tables. */
  ClientDisconnects() {
    this(List.of(Path.of("/proc/net/tcp"), Path.of("/proc/net/tcp6")));
  }

  ClientDisconnects(List<Path> tables) {
    this.tables = tables;
  }

  /**
   * Runs {@code gone} once, from another thread, when {@code connection} is found closed, unless
   * the returned handle was closed first.
   */
  synchronized Watch watch(Connection connection, Runnable gone) {
    watched.put(connection, gone);
    if (!polling) {
      polling = true;
      Thread.ofVirtual().name("box-client-disconnects").start(this::poll);
    }
    return () -> unwatch(connection, gone);
  }

  private synchronized void unwatch(Connection connection, Runnable gone) {
    watched.remove(connection, gone);
  }

  /** Reads the tables until nothing is watched, then ends. */
  private void poll() {
    try {
      while (true) {
        Thread.sleep(POLL);
        Set<Connection> connections;
        synchronized (this) {
          if (watched.isEmpty()) {
            polling = false;
            return;
          }
          connections = Set.copyOf(watched.keySet());
        }
        Set<Connection> established;
        try {
          established = established(connections);
        } catch (IOException e) {
          log.debug("cannot read the TCP tables; disconnects show at the next write: {}", e);
          continue;
        }
        for (Connection connection : connections) {
          if (!established.contains(connection)) {
            Runnable gone;
            synchronized (this) {
              gone = watched.remove(connection);
            }
            if (gone != null) {
              gone.run();
            }
          }
        }
      }
    } catch (InterruptedException e) {
      synchronized (this) {
        polling = false;
      }
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      synchronized (this) {
        polling = false;
      }
      throw e;
    }
  }

  /**
   * Those of {@code connections} that the tables show ESTABLISHED.
   *
   * @throws IOException when no table could be read
   */
  Set<Connection> established(Set<Connection> connections) throws IOException {
    Map<Long, List<Connection>> byPorts = new HashMap<>();
    for (Connection connection : connections) {
      byPorts.computeIfAbsent(connection.ports(), ports -> new ArrayList<>()).add(connection);
    }
    Set<Connection> established = new HashSet<>();
    boolean read = false;
    for (Path table : tables) {
      try (BufferedReader lines = Files.newBufferedReader(table, StandardCharsets.US_ASCII)) {
        read = true;
        lines.readLine(); // the header
        String line;
        while ((line = lines.readLine()) != null) {
          match(line.strip().split("\\s+"), byPorts, established);
        }
      } catch (NoSuchFileException e) {
        // No IPv6 here: the other table has every connection.
      }
    }
    if (!read) {
      throw new NoSuchFileException(tables.toString());
    }
    return established;
  }

  /** Adds the connection of one table row ({@code sl local remote st ...}) when it is watched. */
  private static void match(
      String[] row, Map<Long, List<Connection>> byPorts, Set<Connection> established) {
    if (row.length < 4 || !row[3].equals(ESTABLISHED)) {
      return;
    }
    int localColon = row[1].lastIndexOf(':');
    int remoteColon = row[2].lastIndexOf(':');
    if (localColon < 0 || remoteColon < 0) {
      return;
    }
    long ports =
        (long) Integer.parseInt(row[1].substring(localColon + 1), 16) << 16
            | Integer.parseInt(row[2].substring(remoteColon + 1), 16);
    List<Connection> candidates = byPorts.get(ports);
    if (candidates == null) {
      return;
    }
    InetAddress remote = address(row[2].substring(0, remoteColon));
    for (Connection connection : candidates) {
      if (connection.remote().equals(remote)) {
        established.add(connection);
      }
    }
  }

  /**
   * An address of the tables: 4 or 16 bytes in hexadecimal, each group of 4 in the host's byte
   * order. An IPv4 address mapped into IPv6 comes out as the IPv4 address.
   */
  static InetAddress address(String hex) {
    byte[] bytes = HexFormat.of().parseHex(hex);
    if (ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN) {
      for (int group = 0; group + 4 <= bytes.length; group += 4) {
        swap(bytes, group, group + 3);
        swap(bytes, group + 1, group + 2);
      }
    }
    try {
      return InetAddress.getByAddress(bytes);
    } catch (UnknownHostException e) {
      throw new IllegalArgumentException("not an address of 4 or 16 bytes: " + hex, e);
    }
  }

  private static void swap(byte[] bytes, int i, int j) {
    byte b = bytes[i];
    bytes[i] = bytes[j];
    bytes[j] = b;
  }
}
