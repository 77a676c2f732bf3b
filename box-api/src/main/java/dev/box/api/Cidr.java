package dev.box.api;

import java.util.Arrays;
import java.util.regex.Pattern;

/**
 * An IPv4 or IPv6 address block, such as {@code 198.51.100.0/24}; a bare address is a block of one.
 *
 * <p>Parsing never consults DNS: a host name is refused. The block is kept in canonical form, with
 * the bits past the prefix cleared, so that {@code 10.1.2.3/8} and {@code 10.0.0.0/8} are equal.
 *
 * @param address the network address: 4 bytes for IPv4, 16 for IPv6
 * @param prefix the prefix length: 0 to 32 for IPv4, 0 to 128 for IPv6
 */
public record Cidr(byte[] address, int prefix) {
  private static final Pattern IPV4 =
      Pattern.compile(
          "(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)(\\.(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)){3}");
  private static final Pattern IPV6_CHARS = Pattern.compile("[0-9A-Fa-f:.]+");

  /** Checks the prefix and clears the bits past it. */
  public Cidr {
    if (address.length != 4 && address.length != 16) {
      throw new IllegalArgumentException("an address has 4 or 16 bytes");
    }
    if (prefix < 0 || prefix > address.length * 8) {
      throw new IllegalArgumentException("prefix " + prefix + " is out of range");
    }
    address = masked(address, prefix);
  }

  /**
   * Parses {@code a.b.c.d}, {@code a.b.c.d/n}, an IPv6 literal or an IPv6 literal with {@code /n}.
   *
   * @throws IllegalArgumentException with a message naming the text, when it is none of these
   */
  public static Cidr parse(String text) {
    String s = text.strip();
    int slash = s.indexOf('/');
    String host = slash < 0 ? s : s.substring(0, slash);
    byte[] address = literal(host);
    if (address == null) {
      throw new IllegalArgumentException(
          "'" + text + "' is not an IP address or CIDR block (host names are not supported)");
    }
    int prefix = address.length * 8;
    if (slash >= 0) {
      String bits = s.substring(slash + 1);
      if (!bits.matches("\\d{1,3}") || Integer.parseInt(bits) > address.length * 8) {
        throw new IllegalArgumentException("'" + text + "' has an invalid prefix length");
      }
      prefix = Integer.parseInt(bits);
    }
    return new Cidr(address, prefix);
  }

  private static byte @org.jspecify.annotations.Nullable [] literal(String host) {
    if (IPV4.matcher(host).matches()) {
      String[] parts = host.split("\\.");
      byte[] b = new byte[4];
      for (int i = 0; i < 4; i++) {
        b[i] = (byte) Integer.parseInt(parts[i]);
      }
      return b;
    }
    if (host.indexOf(':') >= 0 && IPV6_CHARS.matcher(host).matches()) {
      try {
        // A text with ':' and only these characters is parsed as a literal, never looked up.
        byte[] b = java.net.InetAddress.getByName("[" + host + "]").getAddress();
        return b.length == 16 ? b : null;
      } catch (java.net.UnknownHostException e) {
        return null;
      }
    }
    return null;
  }

  /** Whether this is an IPv4 block. */
  public boolean isIpv4() {
    return address.length == 4;
  }

  /** Whether {@code other} lies wholly inside this block. */
  public boolean contains(Cidr other) {
    return other.address.length == address.length
        && other.prefix >= prefix
        && Arrays.equals(masked(other.address, prefix), address);
  }

  /** Whether the two blocks share any address. */
  public boolean overlaps(Cidr other) {
    return contains(other) || other.contains(this);
  }

  private static byte[] masked(byte[] address, int prefix) {
    byte[] b = address.clone();
    for (int i = 0; i < b.length; i++) {
      int keep = Math.max(0, Math.min(8, prefix - i * 8));
      b[i] = (byte) (b[i] & (0xff << (8 - keep)));
    }
    return b;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Cidr c && prefix == c.prefix && Arrays.equals(address, c.address);
  }

  @Override
  public int hashCode() {
    return 31 * Arrays.hashCode(address) + prefix;
  }

  /** Parses the wire form, a string; see {@link #parse}. */
  @com.fasterxml.jackson.annotation.JsonCreator(
      mode = com.fasterxml.jackson.annotation.JsonCreator.Mode.DELEGATING)
  static Cidr fromJson(String text) {
    return parse(text);
  }

  /** The canonical text, {@code 10.0.0.0/8} or {@code fc00:0:0:0:0:0:0:0/7}. */
  @Override
  @com.fasterxml.jackson.annotation.JsonValue
  public String toString() {
    String host;
    if (isIpv4()) {
      host =
          (address[0] & 0xff)
              + "."
              + (address[1] & 0xff)
              + "."
              + (address[2] & 0xff)
              + "."
              + (address[3] & 0xff);
    } else {
      try {
        host = java.net.InetAddress.getByAddress(address).getHostAddress();
      } catch (java.net.UnknownHostException e) {
        throw new IllegalStateException(e);
      }
    }
    return host + "/" + prefix;
  }
}
