package dev.box.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.box.api.internal.FileTrees;
import dev.box.backend.kubernetes.StandInCluster;
import dev.box.server.BoxServer;
import dev.box.testclient.Answer;
import dev.box.testclient.BoxHttp;
import dev.box.testclient.BoxSocket;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Replicas of Box on one cluster serve the same sessions: real servers (in this JVM, or in a child
 * JVM where a test kills one) with the kubernetes backend, one control token and one sandbox
 * namespace, on the stand-in cluster of the backend's tests (the API server stand-in, and a kubelet
 * that runs each pod as a container of the local Docker engine: {@link StandInCluster}).
 *
 * <p>The lease is the shortest {@code sandbox_lease_sec} allows, 3 s, so that leases run out within
 * a test; waits are for what the cluster shows, never for a time.
 */
class KubernetesReplicasTest {
  private static final String NAMESPACE = "box-sandboxes";

  private @Nullable Path root;
  private @Nullable StandInCluster cluster;
  private @Nullable ServerFleet fleet;
  private @Nullable Path logs;

  @BeforeEach
  void startCluster() throws Exception {
    root = Files.createTempDirectory("box-k8s-replicas");
    logs = Files.createDirectories(root.resolve("logs"));
    cluster = new StandInCluster(NAMESPACE, root.resolve("cluster"));
    Map<String, String> settings = new HashMap<>(cluster.serverSettings());
    settings.put(
        "k8s_kubeconfig", String.valueOf(cluster.writeKubeconfig(root.resolve("kubeconfig"))));
    settings.put("image", StandInCluster.IMAGE);
    settings.put("sandbox_lease_sec", "3");
    fleet = new ServerFleet("kubernetes", settings);
  }

  @AfterEach
  void stopCluster() throws Exception {
    if (fleet != null) {
      fleet.close();
    }
    if (cluster != null) {
      cluster.close();
    }
    if (root != null) {
      FileTrees.deleteTreeQuietly(root);
    }
  }

  private ServerFleet fleet() {
    return Objects.requireNonNull(fleet);
  }

  private StandInCluster cluster() {
    return Objects.requireNonNull(cluster);
  }

  private BoxServer replica() throws Exception {
    return fleet().start(fleet().newDataDir(), Map.of());
  }

  private static BoxHttp http(BoxServer server) {
    return ServerFleet.http(server.port());
  }

  /** The sessions' pods: not the free pods of the pool ({@code pool_size}, 2 by default). */
  private List<Pod> pods() {
    return cluster()
        .client()
        .pods()
        .inNamespace(NAMESPACE)
        .withoutLabel("box.dev/pool")
        .list()
        .getItems();
  }

  /** Every pod, the pool's included. */
  private List<Pod> allPods() {
    return cluster().client().pods().inNamespace(NAMESPACE).list().getItems();
  }

  private boolean podExists(String name) {
    return pods().stream().anyMatch(p -> p.getMetadata().getName().equals(name));
  }

  @Test
  void twoReplicas_serveOneSessionInterchangeably() throws Exception {
    BoxServer a = replica();
    BoxServer b = replica();
    Answer created = http(a).post("/v1/sessions/shared", "{}");
    assertThat(created.status()).as("%s", created).isEqualTo(201);

    Answer onB = http(b).exec("shared", "echo from-b > /workspace/note; hostname", "");
    assertThat(onB.ok()).as("%s", onB).isTrue();
    assertThat(http(a).exec("shared", "cat /workspace/note; hostname", "").stdout())
        .isEqualTo("from-b\n" + onB.stdout());

    JsonNode listed = http(b).get("/v1/sessions").body();
    assertThat(listed.toString()).contains("\"shared\"");
    Answer seenByB = http(b).get("/v1/sessions/shared");
    assertThat(seenByB.text("created_at")).isEqualTo(created.text("created_at"));
    assertThat(seenByB.text("backend_session_id")).isEqualTo(created.text("backend_session_id"));

    assertThat(http(b).delete("/v1/sessions/shared").status()).isEqualTo(200);
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> http(a).get("/v1/sessions/shared").status() == 404);
    await().atMost(Duration.ofSeconds(30)).until(() -> pods().isEmpty());
  }

  @Test
  void aManagedProcessStartedOnOneReplica_isListedAttachedToAndStoppedOnAnother() throws Exception {
    BoxServer a = replica();
    BoxServer b = replica();
    assertThat(http(a).post("/v1/sessions/relayed", "{}").status()).isEqualTo(201);
    Answer started =
        http(a)
            .post(
                "/v1/sessions/relayed/managed-process",
                "{\"process_id\": \"echo\", \"command\": \"cat\"}");
    assertThat(started.status()).as("%s", started).isEqualTo(201);

    JsonNode listedOnB = http(b).get("/v1/sessions/relayed").body();
    assertThat(listedOnB.path("managed_processes"))
        .extracting(p -> p.path("process_id").asText())
        .containsExactly("echo");
    assertThat(http(b).get("/v1/sessions/relayed/managed-process/echo").text("status"))
        .isEqualTo("running");

    try (BoxSocket throughB =
        ServerFleet.relay(b.port(), "/v1/sessions/relayed/managed-process/echo/ws")) {
      throughB.send("through b");
      throughB.send("and back");
      assertThat(throughB.nextText()).isEqualTo("through b");
      assertThat(throughB.nextText()).isEqualTo("and back");
    }
    try (BoxSocket onA =
        ServerFleet.relay(a.port(), "/v1/sessions/relayed/managed-process/echo/ws")) {
      onA.send("on a");
      assertThat(onA.nextText())
          .as("a proxied client that went away leaves the process to the next")
          .isEqualTo("on a");
    }

    Answer stopped = http(b).delete("/v1/sessions/relayed/managed-process/echo");
    assertThat(stopped.status()).as("%s", stopped).isEqualTo(200);
    assertThat(stopped.text("stopped")).isEqualTo("echo");
    assertThat(http(a).get("/v1/sessions/relayed/managed-process/echo").status()).isEqualTo(404);
    assertThat(http(b).get("/v1/sessions/relayed").body().path("managed_processes")).isEmpty();
    assertThat(catsIn("relayed", a)).as("the process is gone from the pod").isZero();
  }

  @Test
  void aProcessIdNoReplicaHolds_isTheSame404OnEither_andAForwardedRequestGoesNoFurther()
      throws Exception {
    BoxServer a = replica();
    BoxServer b = replica();
    assertThat(http(a).post("/v1/sessions/asked", "{}").status()).isEqualTo(201);
    String start = "{\"process_id\": \"held\", \"command\": \"cat\"}";
    assertThat(http(a).post("/v1/sessions/asked/managed-process", start).status()).isEqualTo(201);

    Answer onA = http(a).get("/v1/sessions/asked/managed-process/nothing");
    Answer onB = http(b).get("/v1/sessions/asked/managed-process/nothing");
    assertThat(onA.status()).isEqualTo(404);
    assertThat(onB.status()).isEqualTo(404);
    assertThat(onB.body()).isEqualTo(onA.body());
    assertThat(http(b).delete("/v1/sessions/asked/managed-process/nothing").body())
        .isEqualTo(http(a).delete("/v1/sessions/asked/managed-process/nothing").body());
    String far = "/v1/sessions/asked/managed-process/held/ws?from=99999";
    Answer refusedOnA = BoxSocket.refusal(a.port(), far, BoxHttp.bearer(ServerFleet.TOKEN));
    Answer refusedOnB = BoxSocket.refusal(b.port(), far, BoxHttp.bearer(ServerFleet.TOKEN));
    assertThat(refusedOnA.status()).isEqualTo(400);
    assertThat(refusedOnB).as("the holder's refusal, as it gave it").isEqualTo(refusedOnA);

    BoxHttp forwardedToB = http(b).withHeader("X-Box-Forwarded", "1");
    Answer forwarded = forwardedToB.get("/v1/sessions/asked/managed-process/held");
    assertThat(forwarded.status())
        .as("a forwarded request is answered from what B holds, never forwarded again")
        .isEqualTo(404);
    assertThat(forwarded.errorCode()).isEqualTo("managed_process_not_found");
    assertThat(forwardedToB.get("/v1/sessions/asked").body().path("managed_processes")).isEmpty();
    assertThat(forwardedToB.delete("/v1/sessions/asked/managed-process/held").status())
        .isEqualTo(404);
    assertThat(http(a).get("/v1/sessions/asked/managed-process/held").text("status"))
        .isEqualTo("running");
    Answer noToken =
        new BoxHttp(b.port(), Map.of("X-Box-Forwarded", "1"))
            .get("/v1/sessions/asked/managed-process/held");
    assertThat(noToken.status()).as("a forwarded request needs the token").isEqualTo(401);
  }

  /**
   * How many {@code cat} processes run in the pod of session {@code id}, asked through {@code
   * server}.
   */
  private static int catsIn(String id, BoxServer server) {
    String count =
        http(server)
            .exec(
                id,
                "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done"
                    + " | grep -c '^cat' || true",
                "")
            .stdout();
    return Integer.parseInt(count.strip());
  }

  @Test
  void aReplicaKilled_losesNothingTheOtherServes() throws Exception {
    ServerFleet.Child a =
        fleet().startChild(fleet().newDataDir(), logs().resolve("killed-replica.log"));
    BoxServer b = replica();
    BoxHttp onA = ServerFleet.http(a.port());
    assertThat(onA.post("/v1/sessions/kept", "{}").status()).isEqualTo(201);
    assertThat(onA.exec("kept", "echo before > /workspace/note; sleep 1000 &", "").ok()).isTrue();
    String process = "{\"process_id\": \"orphan\", \"command\": \"cat\"}";
    assertThat(onA.post("/v1/sessions/kept/managed-process", process).status()).isEqualTo(201);
    try (BoxSocket throughA =
        ServerFleet.relay(a.port(), "/v1/sessions/kept/managed-process/orphan/ws")) {
      throughA.send("before");
      assertThat(throughA.nextText()).isEqualTo("before");
    }
    String pod = http(b).get("/v1/sessions/kept").text("backend_session_id");
    assertThat(http(b).exec("kept", "cat /workspace/note", "").stdout()).isEqualTo("before\n");

    a.process().destroyForcibly();
    assertThat(a.process().waitFor(30, TimeUnit.SECONDS)).isTrue();
    await().atMost(Duration.ofSeconds(30)).until(() -> replicaLeases(true) == 2);
    await().atMost(Duration.ofSeconds(30)).until(() -> replicaLeases(true) == 1);

    Answer after =
        http(b)
            .exec(
                "kept",
                "cat /workspace/note; for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline"
                    + " 2>/dev/null; echo; done | grep -c '^sleep 1000'",
                "");
    assertThat(after.stdout()).as("the same pod, its processes running").isEqualTo("before\n1\n");
    assertThat(podExists(pod)).isTrue();
    assertTakenOver(b, "kept", "orphan");
  }

  /**
   * Waits until replica {@code server} relays managed process {@code processId} of {@code session},
   * whose replica went, then checks that it is the same process, running, its stdin and stdout
   * still working.
   */
  private void assertTakenOver(BoxServer server, String session, String processId)
      throws Exception {
    String path = "/v1/sessions/" + session + "/managed-process/" + processId;
    await()
        .atMost(Duration.ofSeconds(30))
        .alias("a replica reattaches to the process")
        .until(() -> http(server).get(path).status() == 200);
    Answer info = http(server).get(path);
    assertThat(info.text("status")).isEqualTo("running");
    assertThat(info.body().path("stdout_offset").asLong())
        .as("the offset goes on from what the first replica relayed")
        .isGreaterThanOrEqualTo("before\n".length());
    assertThat(http(server).get("/v1/sessions/" + session).body().path("managed_processes"))
        .extracting(p -> p.path("process_id").asText())
        .containsExactly(processId);
    try (BoxSocket relay = ServerFleet.relay(server.port(), path + "/ws")) {
      relay.send("after");
      assertThat(relay.nextText()).isEqualTo("after");
    }
  }

  @Test
  void concurrentCreatesOfOneSession_onTwoReplicas_makeOnePod() throws Exception {
    BoxServer a = replica();
    BoxServer b = replica();
    ExecutorService threads = Executors.newFixedThreadPool(2);
    try {
      List<Future<Answer>> creates = new ArrayList<>();
      for (BoxServer server : List.of(a, b)) {
        Callable<Answer> create = () -> http(server).post("/v1/sessions/raced", "{}");
        creates.add(threads.submit(create));
      }
      for (Future<Answer> create : creates) {
        assertThat(create.get().status()).as("%s", create.get()).isIn(200, 201);
      }
    } finally {
      threads.shutdownNow();
    }
    assertThat(pods()).hasSize(1);
    String host = http(a).exec("raced", "hostname", "").stdout();
    assertThat(http(b).exec("raced", "hostname", "").stdout()).isEqualTo(host);
  }

  @Test
  void aSessionNoReplicaServes_isRemovedWhenItsLeaseRunsOut_butAPersistentOneIsKept()
      throws Exception {
    ServerFleet.Child a =
        fleet().startChild(fleet().newDataDir(), logs().resolve("crashed-replica.log"));
    BoxHttp onA = ServerFleet.http(a.port());
    String lost = onA.post("/v1/sessions/lost", "{}").text("backend_session_id");
    String kept =
        onA.post("/v1/sessions/kept", "{\"persistent\": true}").text("backend_session_id");
    a.process().destroyForcibly();
    assertThat(a.process().waitFor(30, TimeUnit.SECONDS)).isTrue();

    BoxServer b = replica();
    await().atMost(Duration.ofSeconds(30)).until(() -> !podExists(lost));
    assertThat(podExists(kept)).as("the persistent session's pod").isTrue();
    assertThat(http(b).exec("kept", "echo served", "\"persistent\": true").stdout())
        .isEqualTo("served\n");
    assertThat(http(b).get("/v1/sessions/lost").status()).isEqualTo(404);
  }

  @Test
  void aStoppingReplica_handsItsSessionsOver_andTheLastOneStopsThem() throws Exception {
    BoxServer a = replica();
    BoxServer b = replica();
    Answer created = http(a).post("/v1/sessions/moved", "{}");
    assertThat(http(a).exec("moved", "echo kept > /workspace/note", "").ok()).isTrue();
    String pod = created.text("backend_session_id");
    String process = "{\"process_id\": \"carried\", \"command\": \"cat\"}";
    assertThat(http(a).post("/v1/sessions/moved/managed-process", process).status()).isEqualTo(201);
    try (BoxSocket throughA =
        ServerFleet.relay(a.port(), "/v1/sessions/moved/managed-process/carried/ws")) {
      throughA.send("before");
      assertThat(throughA.nextText()).isEqualTo("before");
    }

    fleet().stop(a);
    assertThat(replicaLeases(false)).as("a stopped replica deletes its lease").isEqualTo(1);
    // B takes the session over on its next renewal, and keeps renewing its lease.
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> podAnnotation(pod, "box.dev/handed-over") == null);
    Instant renewedAfter = Instant.now().plusSeconds(4);
    await().atMost(Duration.ofSeconds(30)).until(() -> leaseUntil(pod).isAfter(renewedAfter));
    assertThat(http(b).exec("moved", "cat /workspace/note", "").stdout()).isEqualTo("kept\n");
    assertTakenOver(b, "moved", "carried");

    fleet().stop(b);
    await()
        .atMost(Duration.ofSeconds(30))
        .alias("the last replica stops its sessions and the pool's pods")
        .until(() -> allPods().isEmpty());
  }

  private Path logs() {
    return Objects.requireNonNull(logs);
  }

  /** The session record's annotation {@code key} (the record is named as its pod). */
  private @Nullable String podAnnotation(String pod, String key) {
    var secret = cluster().client().secrets().inNamespace(NAMESPACE).withName(pod).get();
    assertThat(secret).as("the record of %s", pod).isNotNull();
    Map<String, String> notes = secret.getMetadata().getAnnotations();
    return notes == null ? null : notes.get(key);
  }

  private Instant leaseUntil(String pod) {
    String until = podAnnotation(pod, "box.dev/lease-until");
    return until == null ? Instant.EPOCH : Instant.parse(until);
  }

  /**
   * How many replica leases there are: those that have not run out when {@code alive}, else all.
   */
  private long replicaLeases(boolean alive) {
    Instant now = Instant.now();
    return cluster().client().leases().inNamespace(NAMESPACE).list().getItems().stream()
        .filter(l -> !alive || runsUntil(l).isAfter(now))
        .count();
  }

  private static Instant runsUntil(Lease lease) {
    return lease
        .getSpec()
        .getRenewTime()
        .toInstant()
        .plusSeconds(lease.getSpec().getLeaseDurationSeconds());
  }
}
