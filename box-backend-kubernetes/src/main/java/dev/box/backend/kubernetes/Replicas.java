package dev.box.backend.kubernetes;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.net.HttpURLConnection;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.Map;

/**
 * The live replicas of one tenant: each keeps a Lease ({@code coordination.k8s.io}) of its own in
 * the sandbox namespace, renews it with its sessions' leases and deletes it when it stops. A
 * replica whose lease has run out is gone.
 *
 * @param client the cluster's API
 * @param namespace the sandbox namespace
 * @param tenant the tenant ({@link Labels#tenant})
 * @param replica this replica
 */
record Replicas(KubernetesClient client, String namespace, String tenant, Replica replica) {
  /** The name of this replica's lease. */
  String leaseName() {
    return Labels.replicaLease(tenant, replica.instanceId());
  }

  /** Renews this replica's lease, or creates it. */
  void renew() {
    ZonedDateTime now = replica.clock().instant().atZone(ZoneOffset.UTC);
    int seconds = (int) replica.lease().toSeconds();
    try {
      client
          .leases()
          .inNamespace(namespace)
          .withName(leaseName())
          .patch(
              PatchContext.of(PatchType.JSON_MERGE),
              new LeaseBuilder()
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
            .withNamespace(namespace)
            .withLabels(Map.of(Labels.MANAGED_BY, Labels.BOX, Labels.TENANT, tenant))
            .endMetadata()
            .withNewSpec()
            .withHolderIdentity(replica.instanceId())
            .withLeaseDurationSeconds(seconds)
            .withAcquireTime(now)
            .withRenewTime(now)
            .endSpec()
            .build();
    client.leases().inNamespace(namespace).resource(lease).create();
  }

  /** Whether another replica of the tenant holds a lease that has not run out. */
  boolean othersAlive() {
    Instant now = replica.clock().instant();
    return client
        .leases()
        .inNamespace(namespace)
        .withLabel(Labels.TENANT, tenant)
        .list()
        .getItems()
        .stream()
        .filter(l -> !l.getMetadata().getName().equals(leaseName()))
        .anyMatch(l -> until(l).isAfter(now));
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
      client.leases().inNamespace(namespace).withName(leaseName()).delete();
    } catch (KubernetesClientException e) {
      // The lease runs out by itself.
    }
  }
}
