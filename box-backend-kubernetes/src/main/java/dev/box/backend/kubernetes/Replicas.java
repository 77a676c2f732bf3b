package dev.box.backend.kubernetes;

import dev.box.core.backend.SharedSessions;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseList;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.NonNamespaceOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.net.HttpURLConnection;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The live replicas of one tenant: each keeps a Lease ({@code coordination.k8s.io}) of its own in
 * the sandbox namespace, renews it with its sessions' leases and deletes it when it stops. A
 * replica whose lease has run out is gone. A replica's lease carries the URL the others reach it at
 * ({@value Labels#REPLICA_URL}), once it has advertised one.
 *
 * <p>Only Box's service account writes Leases in the sandbox namespace (the Role of {@code
 * deploy/kubernetes}), so a URL read from one is a replica's: the others send it the control token.
 */
final class Replicas {
  private final NonNamespaceOperation<Lease, LeaseList, Resource<Lease>> leases;
  private final String tenant;
  private final Replica replica;
  private volatile @Nullable URI url;

  /**
   * @param client the cluster's API
   * @param namespace the sandbox namespace
   * @param tenant the tenant ({@link Labels#tenant})
   * @param replica this replica
   */
  Replicas(KubernetesClient client, String namespace, String tenant, Replica replica) {
    this.leases = client.leases().inNamespace(namespace);
    this.tenant = tenant;
    this.replica = replica;
  }

  /** This replica. */
  Replica replica() {
    return replica;
  }

  /** The name of this replica's lease. */
  String leaseName() {
    return Labels.replicaLease(tenant, replica.instanceId());
  }

  /** Where the other replicas reach this one, or null while it advertises none. */
  @Nullable URI url() {
    return url;
  }

  /** Advertises {@code where} in this replica's lease, at once and with every renewal. */
  void advertise(URI where) {
    url = where;
    renew();
  }

  /**
   * Renews this replica's lease, or creates it; one call at a time, so that the renewal and an
   * advertisement never both create it.
   */
  synchronized void renew() {
    ZonedDateTime now = replica.clock().instant().atZone(ZoneOffset.UTC);
    int seconds = (int) replica.lease().toSeconds();
    Map<String, String> notes = new HashMap<>();
    URI advertised = url;
    if (advertised != null) {
      notes.put(Labels.REPLICA_URL, advertised.toString());
    }
    try {
      leases
          .withName(leaseName())
          .patch(
              PatchContext.of(PatchType.JSON_MERGE),
              new LeaseBuilder()
                  .withNewMetadata()
                  .withAnnotations(notes)
                  .endMetadata()
                  .withNewSpec()
                  .withRenewTime(now)
                  .withLeaseDurationSeconds(seconds)
                  .endSpec()
                  .build());
      return;
    } catch (KubernetesClientException e) {
      if (e.getCode() != HttpURLConnection.HTTP_NOT_FOUND) {
        throw e;
      }
    }
    Lease lease =
        new LeaseBuilder()
            .withNewMetadata()
            .withName(leaseName())
            .withLabels(Map.of(Labels.MANAGED_BY, Labels.BOX, Labels.TENANT, tenant))
            .withAnnotations(notes)
            .endMetadata()
            .withNewSpec()
            .withHolderIdentity(replica.instanceId())
            .withLeaseDurationSeconds(seconds)
            .withAcquireTime(now)
            .withRenewTime(now)
            .endSpec()
            .build();
    leases.resource(lease).create();
  }

  /** Whether another replica of the tenant holds a lease that has not run out. */
  boolean othersAlive() {
    return !others().isEmpty();
  }

  /**
   * The other live replicas of the tenant, each with the URL its lease advertises: null when it
   * advertises none, or one that is not an {@code http} or {@code https} URL of a host.
   */
  List<SharedSessions.Peer> peers() {
    return others().stream()
        .map(l -> new SharedSessions.Peer(l.getMetadata().getName(), url(l)))
        .toList();
  }

  /** The leases of the other replicas of the tenant that have not run out. */
  private List<Lease> others() {
    Instant now = replica.clock().instant();
    return leases.withLabel(Labels.TENANT, tenant).list().getItems().stream()
        .filter(l -> !l.getMetadata().getName().equals(leaseName()))
        .filter(l -> until(l).isAfter(now))
        .toList();
  }

  /** The URL {@code lease} advertises, when it is a plain {@code http(s)://host[:port]}. */
  private static @Nullable URI url(Lease lease) {
    Map<String, String> notes = lease.getMetadata().getAnnotations();
    String text = notes == null ? null : notes.get(Labels.REPLICA_URL);
    if (text == null) {
      return null;
    }
    try {
      URI uri = new URI(text);
      boolean web = "http".equals(uri.getScheme()) || "https".equals(uri.getScheme());
      return web && uri.getHost() != null && uri.getRawUserInfo() == null ? uri : null;
    } catch (URISyntaxException e) {
      return null;
    }
  }

  /** When {@code lease} runs out: its last renewal and its duration. */
  private static Instant until(Lease lease) {
    if (lease.getSpec() == null
        || lease.getSpec().getRenewTime() == null
        || lease.getSpec().getLeaseDurationSeconds() == null) {
      return Instant.EPOCH;
    }
    return lease
        .getSpec()
        .getRenewTime()
        .toInstant()
        .plusSeconds(lease.getSpec().getLeaseDurationSeconds());
  }

  /** Deletes this replica's lease: it stops. A failure is left to the lease's running out. */
  void leave() {
    try {
      leases.withName(leaseName()).delete();
    } catch (KubernetesClientException e) {
      // The lease runs out by itself.
    }
  }
}
