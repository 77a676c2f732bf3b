package dev.box.backend.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import dev.box.core.backend.SharedSessions;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The replicas' leases on the API server stand-in: which replicas another one sees alive, and the
 * only URLs it would send the control token to, those their leases advertise.
 */
class ReplicasTest {
  private static final String NS = "box-sandboxes";
  private static final URI A = URI.create("http://10.0.0.1:5410");

  private final ApiServer server = new ApiServer();
  private final KubernetesClient client = server.client();

  @AfterEach
  void stop() {
    server.close();
  }

  private Replicas replica(String tenant, String id, Clock clock) {
    return new Replicas(
        client, NS, tenant, new Replica(id, "token", Duration.ofSeconds(30), clock));
  }

  private Replicas replica(String id) {
    return replica("tenant", id, Clock.systemUTC());
  }

  @Test
  void peers_areTheOtherLiveReplicasOfTheTenant_withTheUrlsTheirLeasesAdvertise() {
    Replicas a = replica("a");
    Replicas silent = replica("silent");
    Replicas asking = replica("asking");
    a.advertise(A);
    silent.renew();
    asking.renew();
    replica("another-tenant", "d", Clock.systemUTC()).advertise(URI.create("http://10.0.0.4:5410"));
    Instant longAgo = Instant.now().minus(Duration.ofHours(1));
    replica("tenant", "gone", Clock.fixed(longAgo, ZoneOffset.UTC))
        .advertise(URI.create("http://10.0.0.5:5410"));

    assertThat(asking.peers())
        .containsExactlyInAnyOrder(
            new SharedSessions.Peer(a.leaseName(), A),
            new SharedSessions.Peer(silent.leaseName(), null));
    a.renew();
    assertThat(asking.peers())
        .as("a renewal keeps the URL")
        .contains(new SharedSessions.Peer(a.leaseName(), A));
  }

  @Test
  void aLeaseThatAdvertisesAnythingButAnHttpUrlOfAHost_isAPeerWithoutAUrl() {
    Replicas other = replica("other");
    Replicas asking = replica("asking");
    asking.renew();
    for (String url :
        new String[] {
          "file:///etc/passwd", "http://user:secret@10.0.0.1:5410", "10.0.0.1:5410", "http:///x"
        }) {
      other.renew();
      client
          .leases()
          .inNamespace(NS)
          .withName(other.leaseName())
          .patch(
              PatchContext.of(PatchType.JSON_MERGE),
              new LeaseBuilder()
                  .withNewMetadata()
                  .withAnnotations(Map.of(Labels.REPLICA_URL, url))
                  .endMetadata()
                  .build());
      assertThat(asking.peers())
          .as(url)
          .containsExactly(new SharedSessions.Peer(other.leaseName(), null));
    }
  }
}
