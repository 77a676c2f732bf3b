package dev.box.backend.kubernetes;

import java.time.Clock;
import java.time.Duration;

/**
 * This server as one replica of its tenant: the sessions belong to the pair (sandbox namespace,
 * control token), and every replica configured with both serves them.
 *
 * @param instanceId this server's instance id, which names its own lease
 * @param controlToken the control token: with the namespace, it names the tenant
 * @param lease how long a replica's lease, and its lease on a session, last unrenewed ({@code
 *     sandbox_lease_sec}); renewed every third of it
 * @param clock what leases are measured by
 */
public record Replica(String instanceId, String controlToken, Duration lease, Clock clock) {}
