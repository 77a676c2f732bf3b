package dev.box.backend.docker;

import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.Cidr;
import dev.box.core.backend.SandboxSpec;
import dev.box.core.net.EgressPolicy;
import dev.box.core.net.EgressRuleset;
import dev.box.core.net.NetnsFirewall;
import dev.box.sandbox.engine.EngineClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Closes a network-on container's egress: loads the firewall into its network namespace, found
 * through the pid of its init; DNS may go to the resolvers the engine wrote into the container's
 * resolv.conf.
 *
 * @param client the engine's API
 * @param engine {@code docker} or {@code podman}, for messages
 * @param firewall the firewall that is loaded
 * @param policy the operator's egress policy
 * @param callTimeout how long the engine may take to answer
 */
record ContainerEgress(
    EngineClient client,
    String engine,
    NetnsFirewall firewall,
    EgressPolicy policy,
    Duration callTimeout) {
  private static final Logger log = LoggerFactory.getLogger(ContainerEgress.class);

  /** Loads the rules for {@code spec} into the network namespace of the running container. */
  void close(String containerId, SandboxSpec spec) throws IOException {
    EngineClient.Response inspect =
        client.call("GET", "/containers/" + containerId + "/json", null, callTimeout);
    long pid = inspect.json().path("State").path("Pid").asLong(0);
    if (!inspect.ok() || pid <= 0) {
      throw new BoxException(
          BoxErrorCode.INTERNAL_ERROR,
          engine
              + " backend error: cannot find the container's process to close its network: "
              + inspect.message());
    }
    List<Cidr> resolvers = resolvers(inspect.json().path("ResolvConfPath").asText(""));
    firewall.apply(
        pid,
        EgressRuleset.render(
            policy, spec.egress(), NetnsFirewall.hostAddresses(), List.of(), resolvers));
  }

  /** The nameservers of a resolv.conf the engine wrote; none when it cannot be read. */
  private static List<Cidr> resolvers(String resolvConf) {
    if (resolvConf.isEmpty()) {
      return List.of();
    }
    List<Cidr> out = new ArrayList<>();
    try {
      for (String line : Files.readAllLines(Path.of(resolvConf))) {
        String[] words = line.strip().split("\\s+");
        if (words.length >= 2 && words[0].equals("nameserver")) {
          try {
            out.add(Cidr.parse(words[1]));
          } catch (IllegalArgumentException e) {
            log.warn("ignoring nameserver {} of {}", words[1], resolvConf);
          }
        }
      }
    } catch (IOException e) {
      log.warn("cannot read the container's resolv.conf {}: {}", resolvConf, e.toString());
    }
    return out;
  }
}
