package dev.box.testkit;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What keeps the network escape suite's packets on this machine when its server runs in the
 * machine's own network namespace: the uplinks (the interfaces of the default routes, IPv4 and
 * IPv6), a check that refuses a destination that is or is routed through one, and an nftables table
 * that, while it exists, drops and counts every packet forwarded out through an uplink and every
 * packet for a stand-in range that would leave through one, remembering each IPv4 flow it stopped.
 */
final class UplinkGuard {
  /** The ranges of every stand-in address (the /16s are wider than what is used). */
  static final List<String> STAND_IN_RANGES =
      List.of("198.51.100.0/24", "203.0.113.0/24", "169.254.0.0/16", "10.77.0.0/16");

  private static final Pattern DEV = Pattern.compile(" dev (\\S+)");

  private final String table;
  private final List<String> uplinks;
  private final List<String> uplinkAddresses;

  private UplinkGuard(String table, List<String> uplinks, List<String> uplinkAddresses) {
    this.table = table;
    this.uplinks = List.copyOf(uplinks);
    this.uplinkAddresses = List.copyOf(uplinkAddresses);
  }

  /** A guard for a namespace with no uplink: one the suite created, connected to nothing else. */
  static UplinkGuard none() {
    return new UplinkGuard("", List.of(), List.of());
  }

  /** Finds the machine's uplinks and installs the nftables table {@code inet <table>}. */
  static UplinkGuard install(String table) {
    List<String> uplinks = new ArrayList<>();
    List<String> addresses = new ArrayList<>();
    for (String family : List.of("-4", "-6")) {
      Matcher dev = DEV.matcher(HarnessCommand.run("ip", family, "-o", "route", "show", "default"));
      while (dev.find()) {
        if (!uplinks.contains(dev.group(1))) {
          uplinks.add(dev.group(1));
          addresses.addAll(
              addresses(HarnessCommand.run("ip", "-o", "addr", "show", "dev", dev.group(1))));
        }
      }
    }
    UplinkGuard guard = new UplinkGuard(table, uplinks, addresses);
    if (!uplinks.isEmpty()) {
      HarnessCommand.run(List.of("nft", "-f", "-"), guard.ruleset());
    }
    return guard;
  }

  /** The addresses ({@code a.b.c.d}) in the output of {@code ip -o addr show}. */
  static List<String> addresses(String ipAddrShow) {
    List<String> found = new ArrayList<>();
    for (String line : ipAddrShow.lines().toList()) {
      String[] f = line.trim().split("\\s+");
      if (f.length > 3 && f[2].equals("inet")) {
        found.add(f[3].substring(0, f[3].indexOf('/')));
      }
    }
    return found;
  }

  /**
   * Throws unless a packet from the machine's namespace for {@code address} stays on this machine:
   * not an address of an uplink, and not routed through one.
   */
  void requireStaysOnMachine(String address) {
    if (uplinks.isEmpty()) {
      return;
    }
    HarnessCommand.Result route =
        HarnessCommand.attempt(List.of("ip", "-o", "route", "get", address), "");
    Matcher dev = DEV.matcher(route.output());
    if (uplinkAddresses.contains(address) || (dev.find() && uplinks.contains(dev.group(1)))) {
      throw new IllegalStateException(
          "refusing to send anything to "
              + address
              + ": it is, or is routed through, the machine's uplink "
              + uplinks
              + " ("
              + route.output().strip()
              + ")");
    }
  }

  /** A packet's source and destination. */
  record Flow(String source, String destination) {}

  /**
   * The IPv4 flows stopped so far: from anything on the machine, not only the suite's sandboxes.
   */
  List<Flow> stoppedFlows() {
    List<Flow> flows = new ArrayList<>();
    if (!uplinks.isEmpty()) {
      Matcher pair =
          Pattern.compile("([0-9.]+) \\. ([0-9.]+)")
              .matcher(HarnessCommand.run("nft", "list", "set", "inet", table, "stopped"));
      while (pair.find()) {
        flows.add(new Flow(pair.group(1), pair.group(2)));
      }
    }
    return flows;
  }

  /** How many packets, IPv4 and IPv6, have been stopped so far. */
  long stoppedPackets() {
    if (uplinks.isEmpty()) {
      return 0;
    }
    Matcher counter =
        Pattern.compile("counter packets ([0-9]+)")
            .matcher(HarnessCommand.run("nft", "list", "table", "inet", table));
    long total = 0;
    while (counter.find()) {
      total += Long.parseLong(counter.group(1));
    }
    return total;
  }

  /** Deletes the table. */
  void remove() {
    if (!uplinks.isEmpty()) {
      HarnessCommand.attempt(List.of("nft", "delete", "table", "inet", table), "");
    }
  }

  /** Deletes every {@code inet} table whose name {@code isLeftover} accepts. */
  static void sweep(Predicate<String> isLeftover) {
    HarnessCommand.Result tables = HarnessCommand.attempt(List.of("nft", "list", "tables"), "");
    if (tables.exitCode() != 0) {
      return;
    }
    for (String line : tables.output().lines().toList()) {
      String[] f = line.split(" ");
      if (f.length == 3 && f[1].equals("inet") && isLeftover.test(f[2])) {
        HarnessCommand.run("nft", "delete", "table", "inet", f[2]);
      }
    }
  }

  /** Whether {@code address} is in a range the stand-in world uses. */
  static boolean isStandIn(String address) {
    for (String range : STAND_IN_RANGES) {
      int slash = range.indexOf('/');
      int mask = -1 << (32 - Integer.parseInt(range.substring(slash + 1)));
      if ((ipv4(address) & mask) == (ipv4(range.substring(0, slash)) & mask)) {
        return true;
      }
    }
    return false;
  }

  private String ruleset() {
    String devices = "{ \"" + String.join("\", \"", uplinks) + "\" }";
    return """
        table inet %1$s {
          set stopped { type ipv4_addr . ipv4_addr; flags dynamic; }
          chain guard_forward {
            type filter hook forward priority -10; policy accept;
            oifname %2$s add @stopped { ip saddr . ip daddr }
            oifname %2$s counter drop
          }
          chain guard_output {
            type filter hook output priority -10; policy accept;
            oifname %2$s ip daddr %3$s add @stopped { ip saddr . ip daddr }
            oifname %2$s ip daddr %3$s counter drop
          }
        }
        """
        .formatted(table, devices, "{ " + String.join(", ", STAND_IN_RANGES) + " }");
  }

  private static int ipv4(String dotted) {
    int value = 0;
    for (String part : dotted.split("\\.")) {
      value = value << 8 | Integer.parseInt(part);
    }
    return value;
  }
}
