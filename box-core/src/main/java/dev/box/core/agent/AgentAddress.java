package dev.box.core.agent;

import java.io.IOException;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * An exec agent in network mode ({@code box-agent --listen}): where it listens, and the secret
 * every connection to it must open with. Used where the server cannot reach the sandbox's files or
 * cgroups (a pod of a cluster) and so connects to the agent rather than the other way round.
 *
 * <p>The address is TCP, or a Unix socket where a relay on the host leads to the agent ({@code
 * box-agent --relay}: a network-on micro-VM, whose forwarded port listens only in the VM's own
 * network namespace); either way every connection opens with the secret.
 *
 * @param address the agent's address: an {@link java.net.InetSocketAddress} or a {@link
 *     UnixDomainSocketAddress}
 * @param secret the sandbox's secret, {@value #SECRET_BYTES} bytes
 */
public record AgentAddress(SocketAddress address, byte[] secret) {
  /** The size of a secret. */
  public static final int SECRET_BYTES = 32;

  private static final byte[] MAGIC = "BOXA".getBytes(StandardCharsets.US_ASCII);

  /** Checks and copies the secret. */
  public AgentAddress {
    if (secret.length != SECRET_BYTES) {
      throw new IllegalArgumentException("an agent's secret is " + SECRET_BYTES + " bytes");
    }
    secret = secret.clone();
  }

  /** A control connection, its header sent. */
  SocketChannel control(Duration timeout) throws IOException {
    return connect(header('C').flip(), timeout);
  }

  /** Stream {@code fd} of process {@code id}, its header sent. */
  SocketChannel stream(int id, byte[] token, int fd, Duration timeout) throws IOException {
    return connect(header('O').putInt(id).put(token).put((byte) fd).flip(), timeout);
  }

  private ByteBuffer header(char kind) {
    return ByteBuffer.allocate(MAGIC.length + SECRET_BYTES + 1 + 13)
        .put(MAGIC)
        .put(secret)
        .put((byte) kind);
  }

  private SocketChannel connect(ByteBuffer header, Duration timeout) throws IOException {
    boolean unix = address instanceof UnixDomainSocketAddress;
    SocketChannel channel =
        unix ? SocketChannel.open(StandardProtocolFamily.UNIX) : SocketChannel.open();
    try {
      if (unix) {
        // A Unix socket's connect does not wait on a network: it is taken or refused at once.
        channel.connect(address);
      } else {
        channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
        channel.socket().connect(address, (int) Math.max(1, timeout.toMillis()));
      }
      while (header.hasRemaining()) {
        channel.write(header);
      }
      return channel;
    } catch (IOException | RuntimeException e) {
      channel.close();
      throw new IOException("cannot reach the exec agent at " + address + ": " + e.getMessage(), e);
    }
  }

  /** Never shows the secret. */
  @Override
  public String toString() {
    return "AgentAddress[" + address + "]";
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof AgentAddress other
        && address.equals(other.address)
        && java.security.MessageDigest.isEqual(secret, other.secret);
  }

  @Override
  public int hashCode() {
    return address.hashCode();
  }
}
