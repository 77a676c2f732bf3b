package dev.box.core.net;

import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.Cidr;
import dev.box.core.backend.HostCommand;
import java.io.IOException;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Loads an {@link EgressRuleset} into the network namespace of a sandbox process, from the host.
 *
 * <p>It runs {@code nsenter --net=/proc/<pid>/ns/net -- nft -f -} with the ruleset on standard
 * input: the only variable word on the command line is the process id. Code inside the sandbox
 * cannot change the rules: it has no capability in the namespace's owning user namespace.
 */
public final class NetnsFirewall {
  private static final long TIMEOUT_SECONDS = 10;

  private final @Nullable Path nsenter;
  private final @Nullable Path nft;
  private final String status;

  private NetnsFirewall(@Nullable Path nsenter, @Nullable Path nft, String status) {
    this.nsenter = nsenter;
    this.nft = nft;
    this.status = status;
  }

  /**
   * Finds {@code nsenter} and {@code nft} and proves that the kernel takes a ruleset, in a network
   * namespace made for the probe.
   */
  public static NetnsFirewall probe() {
    Path nsenter = HostCommand.find("nsenter");
    Path nft = HostCommand.find("nft");
    Path unshare = HostCommand.find("unshare");
    if (nsenter == null || nft == null || unshare == null) {
      return new NetnsFirewall(
          null, null, "none: nft not found (apt-get install nftables util-linux)");
    }
    String probe =
        "table inet "
            + EgressRuleset.TABLE
            + " { chain output { type filter hook output"
            + " priority 0; policy accept; ip daddr { 127.0.0.0/8 } accept; }; }\n";
    try {
      run(List.of(unshare.toString(), "--net", "--", nft.toString(), "-f", "-"), probe);
    } catch (IOException e) {
      return new NetnsFirewall(null, null, "none: nftables does not work here: " + e.getMessage());
    }
    return new NetnsFirewall(nsenter, nft, "nftables");
  }

  /** Whether rulesets can be loaded. */
  public boolean available() {
    return nsenter != null && nft != null;
  }

  /** {@code nftables}, or {@code none: <why>}; what health reports as the egress enforcement. */
  public String status() {
    return status;
  }

  /**
   * Loads {@code ruleset} into the network namespace of process {@code pid}.
   *
   * @throws BoxException when the firewall is unavailable or refuses the ruleset; the caller must
   *     then not let the sandbox run
   */
  public void apply(long pid, String ruleset) {
    Path enter = nsenter;
    Path tables = nft;
    if (enter == null || tables == null) {
      throw new BoxException(
          BoxErrorCode.BACKEND_UNAVAILABLE,
          "network on needs the egress firewall, which is unavailable: " + status);
    }
    try {
      run(
          List.of(
              enter.toString(),
              "--net=/proc/" + pid + "/ns/net",
              "--",
              tables.toString(),
              "-f",
              "-"),
          ruleset);
    } catch (IOException e) {
      throw new BoxException(
          BoxErrorCode.INTERNAL_ERROR, "cannot apply the egress firewall: " + e.getMessage(), e);
    }
  }

  /** Every address of this host's interfaces, in the namespace the server runs in. */
  public static List<Cidr> hostAddresses() {
    List<Cidr> out = new ArrayList<>();
    try {
      for (NetworkInterface nic : Collections.list(NetworkInterface.getNetworkInterfaces())) {
        for (InetAddress address : Collections.list(nic.getInetAddresses())) {
          byte[] raw = address.getAddress();
          out.add(new Cidr(raw, raw.length * 8));
        }
      }
    } catch (SocketException e) {
      throw new BoxException(
          BoxErrorCode.INTERNAL_ERROR, "cannot list the host's addresses: " + e.getMessage(), e);
    }
    return out;
  }

  private static void run(List<String> argv, String input) throws IOException {
    HostCommand.run(argv, input, Duration.ofSeconds(TIMEOUT_SECONDS));
  }
}
