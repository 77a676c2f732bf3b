package dev.box.testkit;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/** Reads what a sandbox printed about its own network: routes, addresses, a listener's port. */
final class SandboxNetwork {
  private SandboxNetwork() {}

  /**
   * The gateway of the default route in the text of /proc/net/route, as a dotted quad.
   *
   * @throws IllegalStateException when there is no default route
   */
  static String defaultGateway(String procNetRoute) {
    for (String line : procNetRoute.lines().skip(1).toList()) {
      String[] f = line.trim().split("\\s+");
      if (f.length > 2 && f[1].equals("00000000")) {
        // The kernel prints the address in host (little-endian) byte order.
        int v = Integer.parseUnsignedInt(f[2], 16);
        return (v & 0xff) + "." + (v >>> 8 & 0xff) + "." + (v >>> 16 & 0xff) + "." + (v >>> 24);
      }
    }
    throw new IllegalStateException("no default route in /proc/net/route:\n" + procNetRoute);
  }

  /** The IPv4 addresses of the namespace (loopback included) in the text of /proc/net/fib_trie. */
  static List<String> localAddresses(String fibTrie) {
    Set<String> found = new LinkedHashSet<>();
    String last = "";
    for (String line : fibTrie.lines().map(String::strip).toList()) {
      if (line.startsWith("|-- ")) {
        last = line.substring("|-- ".length());
      } else if (line.equals("/32 host LOCAL")) {
        found.add(last);
      }
    }
    return List.copyOf(found);
  }

  /**
   * The port in the {@code port=<port>} line that listen.pl printed.
   *
   * @throws IllegalStateException when there is none (the listener did not start)
   */
  static int listenerPort(String output) {
    return output
        .lines()
        .filter(l -> l.startsWith("port="))
        .findFirst()
        .map(l -> Integer.parseInt(l.substring("port=".length()).strip()))
        .orElseThrow(() -> new IllegalStateException("the listener did not start:\n" + output));
  }
}
