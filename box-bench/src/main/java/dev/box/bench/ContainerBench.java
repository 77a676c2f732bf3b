package dev.box.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The container backends measured against their engine's own CLI in the same run: creating a
 * session against a bare {@code <engine> run -d}, and a warm {@code true} exec through Box against
 * a bare {@code <engine> exec <container> true}. It is a measurement, not a test.
 *
 * <p>Box's rows are timed on a server that has already served {@value #SERVER_WARMUP_CREATES}
 * creates with an exec and {@value #SERVER_WARMUP_EXECS} warm execs, about what {@code bench/run}'s
 * server has behind it when its warm row starts: a server that has only just started runs its
 * request path in the interpreter, and that is not what a session meets after the first minutes.
 * The pooled creates wait, untimed, until the pool holds all its pre-started containers again, as
 * {@code bench/run}'s cold row does; a row of creates back to back shows what a drained pool costs.
 * The kubernetes backend's health reports no pool, so its creates do not wait: they are back to
 * back in every row.
 *
 * <p>The engine {@code kubernetes} is the kubernetes backend on the stand-in cluster of {@code
 * scripts/dev-cluster} (started and stopped here, unless {@code --kubeconfig} names a running one),
 * measured against Docker's CLI, since its kubelet runs each pod as Docker containers (the agent's
 * init container, then the pod's). The engine {@code kubernetes-api} is the same with {@code
 * k8s_agent_path=api-server}: every connection to the pods' agents through the stand-in API
 * server's exec.
 *
 * <p>Usage: {@code BoxBench --containers [--engines docker,podman,kubernetes,kubernetes-api]
 * [--image NAME] [--iterations N] [--kubeconfig FILE] [--markdown FILE]}; the engines must run and
 * have the image ({@code scripts/engines up}).
 */
final class ContainerBench {
  static final String USAGE =
      "usage: bench/run --containers [--engines docker,podman,kubernetes,kubernetes-api] [--image NAME]"
          + " [--iterations N] [--kubeconfig FILE] [--markdown FILE]";

  /** The kubernetes backend, on a stand-in cluster whose pods are Docker containers. */
  private static final String KUBERNETES = "kubernetes";

  /** The kubernetes backend reaching the agents through the API server. */
  private static final String KUBERNETES_API = "kubernetes-api";

  /** The targets of the container backends, as ratios to the bare CLI. */
  private static final double COLD_TARGET = 0.05;

  private static final double WARM_TARGET = 0.06;
  private static final int WARMUP = 5;

  /** The work Box's server does, untimed, before its rows. */
  private static final int SERVER_WARMUP_CREATES = 30;

  private static final int SERVER_WARMUP_EXECS = 300;

  /** How long a pooled create waits for the pool to refill: a pod starts in seconds. */
  private static final Duration REFILL = Duration.ofMinutes(2);

  /** Names this run's floor containers, so that runs at the same time do not collide. */
  private static final long RUN = ProcessHandle.current().pid();

  private ContainerBench() {}

  /** One engine's numbers. */
  record Result(
      String engine,
      String floorEngine,
      String backend,
      Latencies bareRun,
      Latencies bareExec,
      Latencies create,
      Latencies createUnpooled,
      Latencies warm,
      Latencies coldExec,
      Latencies coldExecBackToBack) {}

  /** Parses the arguments after {@code --containers}, runs and prints; returns the exit status. */
  static int main(List<String> args, PrintStream out) throws IOException, InterruptedException {
    List<String> engines = List.of("docker", "podman");
    String image = "box-debian:bookworm";
    int iterations = 30;
    Path markdown = null;
    Path kubeconfig = null;
    for (int i = 0; i < args.size(); i++) {
      String arg = args.get(i);
      if (i + 1 >= args.size()) {
        System.err.println("box-bench: " + arg + " needs a value\n" + USAGE);
        return 2;
      }
      String value = args.get(++i);
      switch (arg) {
        case "--engines" -> engines = List.of(value.split(","));
        case "--image" -> image = value;
        case "--iterations" -> iterations = Integer.parseInt(value);
        case "--markdown" -> markdown = Path.of(value);
        case "--kubeconfig" -> kubeconfig = Path.of(value);
        default -> {
          System.err.println("box-bench: unknown option " + arg + "\n" + USAGE);
          return 2;
        }
      }
    }
    List<Result> results = new ArrayList<>();
    DevCluster cluster =
        engines.stream().anyMatch(e -> e.startsWith(KUBERNETES)) && kubeconfig == null
            ? DevCluster.up()
            : null;
    try {
      Path k8s = cluster == null ? kubeconfig : cluster.kubeconfig();
      for (String engine : engines) {
        results.add(measure(engine, image, iterations, k8s, out));
      }
    } finally {
      if (cluster != null) {
        cluster.close();
      }
    }
    String text = report(results, image, iterations, false);
    out.println();
    out.print(text);
    if (markdown != null) {
      Files.writeString(markdown, report(results, image, iterations, true), StandardCharsets.UTF_8);
      out.println("\nMarkdown written to " + markdown);
    }
    return 0;
  }

  private static Result measure(
      String engine, String image, int iterations, @Nullable Path kubeconfig, PrintStream out)
      throws IOException, InterruptedException {
    boolean k8s = engine.equals(KUBERNETES) || engine.equals(KUBERNETES_API);
    String floorEngine = k8s ? "docker" : engine;
    String cli = "/usr/bin/" + floorEngine;
    Map<String, String> settings =
        new HashMap<>(Map.of("backend", k8s ? KUBERNETES : engine, "image", image));
    if (engine.equals(KUBERNETES_API)) {
      settings.put("k8s_agent_path", "api-server");
    }
    if (k8s) {
      if (kubeconfig == null) {
        throw new IllegalStateException("no kubeconfig for the kubernetes backend");
      }
      settings.put("k8s_kubeconfig", kubeconfig.toString());
      settings.put("k8s_agent_image", DevCluster.agentImage());
      // As the stand-in cluster's nodes have it: network-off sessions need it for their namespace.
      settings.put("k8s_seccomp_profile", "localhost/box-sandbox.json");
    }
    progress(out, engine + " floor: " + iterations + " bare `" + floorEngine + " run -d`");
    Latencies bareRun =
        Sampler.measure(
            WARMUP,
            iterations,
            i ->
                ProcessFloors.run(
                    List.of(cli, "run", "-d", "--name", bareName(i), image, "sleep", "infinity")),
            i -> ProcessFloors.run(List.of(cli, "rm", "-f", bareName(i))));
    String holder = "box-bench-exec-floor-" + RUN;
    ProcessFloors.run(List.of(cli, "run", "-d", "--name", holder, image, "sleep", "infinity"));
    Latencies bareExec;
    try {
      progress(out, engine + " floor: " + iterations + " bare `" + floorEngine + " exec <c> true`");
      bareExec =
          Sampler.measure(
              WARMUP, iterations, i -> ProcessFloors.run(List.of(cli, "exec", holder, "true")));
    } finally {
      ProcessFloors.run(List.of(cli, "rm", "-f", holder));
    }
    try (LocalBox box = LocalBox.start(100, settings)) {
      BenchClient client = box.client();
      String backend = client.status().path("backend").path("reason").asText();
      progress(
          out,
          engine
              + " box: warming the server up ("
              + SERVER_WARMUP_CREATES
              + " creates with an exec, "
              + SERVER_WARMUP_EXECS
              + " warm execs), untimed");
      warmUp(client);
      progress(out, engine + " box: " + iterations + " session creations, the pool refilled");
      Latencies create = refilled(client, WARMUP, iterations, "c", client::create);
      progress(out, engine + " box: " + iterations + " warm execs of true");
      Latencies warm = client.warmExecs(WARMUP, iterations);
      progress(
          out, engine + " box: " + iterations + " create+exec in one request, the pool refilled");
      Latencies coldExec = refilled(client, WARMUP, iterations, "x", client::execTrue);
      progress(out, engine + " box: " + iterations + " create+exec back to back");
      client.awaitPoolFull(REFILL);
      Latencies coldExecBackToBack = client.coldExecs(WARMUP, iterations);
      Latencies createUnpooled = createUnpooled(engine, settings, iterations, out);
      return new Result(
          engine,
          floorEngine,
          backend,
          bareRun,
          bareExec,
          create,
          createUnpooled,
          warm,
          coldExec,
          coldExecBackToBack);
    }
  }

  /**
   * What the server does before its rows are timed: creates that each run an exec (their sessions
   * deleted, the pool refilled after each), then warm execs in one session.
   */
  private static void warmUp(BenchClient client) throws IOException, InterruptedException {
    refilled(client, 0, SERVER_WARMUP_CREATES, "w", client::execTrue);
    client.warmExecs(0, SERVER_WARMUP_EXECS);
  }

  /** A request on a session id, which it may create. */
  @FunctionalInterface
  private interface OnSession {
    void run(String id) throws IOException, InterruptedException;
  }

  /**
   * Times {@code timed} on a fresh session id of {@code kind} each iteration; the session is
   * deleted after it, untimed, and the next waits, untimed, until the pool is full again.
   */
  private static Latencies refilled(
      BenchClient client, int warmup, int iterations, String kind, OnSession timed)
      throws IOException, InterruptedException {
    return Sampler.measure(
        warmup,
        iterations,
        i -> timed.run(BenchClient.benchId(kind, i)),
        i -> {
          client.delete(BenchClient.benchId(kind, i));
          client.awaitPoolFull(REFILL);
        });
  }

  /**
   * Session creations again on a second server with {@code pool_size 0}, in the same run: the
   * default spec is of the pooled shape, so the first server's creates take pre-started containers
   * while its pool keeps up.
   */
  private static Latencies createUnpooled(
      String engine, Map<String, String> settings, int iterations, PrintStream out)
      throws IOException, InterruptedException {
    Map<String, String> unpooled = new HashMap<>(settings);
    unpooled.put("pool_size", "0");
    try (LocalBox box = LocalBox.start(100, unpooled)) {
      BenchClient client = box.client();
      progress(out, engine + " box, pool_size 0: " + iterations + " session creations");
      return Sampler.measure(
          WARMUP,
          iterations,
          i -> client.create(BenchClient.benchId("u", i)),
          i -> client.delete(BenchClient.benchId("u", i)));
    }
  }

  private static String bareName(int iteration) {
    return "box-bench-floor-"
        + RUN
        + "-"
        + (iteration < 0 ? "w" + -iteration : Integer.toString(iteration));
  }

  private static String report(List<Result> results, String image, int iterations, boolean md) {
    StringBuilder text = new StringBuilder();
    text.append("Container backends, image ")
        .append(image)
        .append(", ")
        .append(iterations)
        .append(" iterations each after ")
        .append(WARMUP)
        .append(" warm-up; Box's server warmed up by ")
        .append(SERVER_WARMUP_CREATES)
        .append(" creates with an exec and ")
        .append(SERVER_WARMUP_EXECS)
        .append(" warm execs\n\n");
    Table table = new Table("measure", "p50 ms", "p95 ms", "p99 ms", "ratio p50", "target", "");
    for (Result r : results) {
      // The targets are the container backends'; the stand-in cluster's numbers are ratios only.
      boolean targets = r.engine.equals(r.floorEngine);
      String bare = r.engine + " bare" + (targets ? "" : " " + r.floorEngine);
      row(table, bare + " run -d (floor)", r.bareRun, null, 0);
      row(table, r.engine + " Box session create", r.create, r.bareRun, 0);
      row(table, r.engine + " Box session create, pool_size 0", r.createUnpooled, r.bareRun, 0);
      row(
          table,
          r.engine + " Box create+exec true",
          r.coldExec,
          r.bareRun,
          targets ? COLD_TARGET : 0);
      row(
          table,
          r.engine + " Box create+exec true, back to back",
          r.coldExecBackToBack,
          r.bareRun,
          0);
      row(table, bare + " exec true (floor)", r.bareExec, null, 0);
      row(table, r.engine + " Box warm exec true", r.warm, r.bareExec, targets ? WARM_TARGET : 0);
    }
    text.append(md ? table.markdown() : table.text());
    text.append('\n');
    for (Result r : results) {
      text.append(md ? "- " : "").append(r.engine).append(": ").append(r.backend).append('\n');
    }
    return text.toString();
  }

  private static void row(
      Table table, String name, Latencies l, @Nullable Latencies floor, double target) {
    String ratio = floor == null ? "" : format(l.p50() / floor.p50()) + "x";
    String goal = target > 0 ? "<= " + format(target) + "x" : "";
    String verdict =
        target > 0 && floor != null ? (l.p50() / floor.p50() <= target ? "PASS" : "MISS") : "";
    table.row(name, format(l.p50()), format(l.p95()), format(l.p99()), ratio, goal, verdict);
  }

  private static String format(double value) {
    return String.format(Locale.ROOT, "%.2f", value);
  }

  private static void progress(PrintStream out, String what) {
    out.println("running " + what + " ...");
    out.flush();
  }
}
