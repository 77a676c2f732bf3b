package dev.box.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * What a fork and a snapshot of a session with a 1 GiB workspace cost, through the real server on
 * bubblewrap: the time of {@code POST /v1/sessions/{id}/fork} (a new session, its sandbox started),
 * of {@code POST .../snapshots}, and of a create {@code from_snapshot}, and the disk each takes
 * beyond what was used before it (read from the store's file system after a {@code sync}). A full
 * {@code cp -a} of the same workspace on the data dir's file system, the cost without a
 * copy-on-write store, is measured beside them.
 *
 * <p>Then the same on Docker, when its socket is at {@value #DOCKER_SOCKET} with the image {@value
 * #DOCKER_IMAGE}: a source with a read-only root (its workspace is all a fork copies), and one that
 * wrote {@value #ROOT_MIB} MiB to its writable root, whose fork and snapshot commit the container's
 * layer to an image; their disk is read from the store's file system and Docker's data root
 * ({@value #DOCKER_ROOT}) together. It is a measurement, not a test.
 *
 * <p>Usage: {@code BoxBench --fork [N]} (iterations, default 10); the store needs root.
 */
final class ForkBench {
  private static final int WARMUP = 2;
  private static final long MIB = 1024 * 1024;
  private static final String SOURCE = "bench-fork-source";
  private static final String DOCKER_SOCKET = "/var/run/docker.sock";
  private static final String DOCKER_IMAGE = "box-debian:bookworm";
  private static final String DOCKER_ROOT = "/var/lib/docker";
  private static final int ROOT_MIB = 64;
  private static final String WORKSPACE_GIB = "head -c 1G /dev/urandom > /workspace/data.bin";

  private ForkBench() {}

  /** A measurement: its latencies and the most disk one iteration took, in MiB. */
  private record Cost(Latencies latencies, double maxExtraMib) {}

  /** Runs and prints; returns the exit status. */
  static int main(List<String> args, PrintStream out) throws IOException, InterruptedException {
    int iterations = args.isEmpty() ? 10 : Integer.parseInt(args.get(0));
    Table table = new Table("measure (1 GiB workspace)", "p50 ms", "p95 ms", "max extra disk MiB");
    String store;
    try (LocalBox box = LocalBox.start(iterations + WARMUP + 4, Map.of("backend", "bwrap"))) {
      BenchClient client = box.client();
      store = client.status().path("backend").path("enforced").path("fork").asText();
      progress(out, "writing 1 GiB of random data in the source's workspace");
      client.run(SOURCE, WORKSPACE_GIB, 600);
      Disk used = new Disk(List.of(storeOf(box)));
      progress(out, iterations + " forks");
      row(
          table,
          "fork: POST /v1/sessions/{id}/fork",
          measure(
              used,
              iterations,
              i -> client.fork(SOURCE, BenchClient.benchId("fork", i)),
              i -> client.delete(BenchClient.benchId("fork", i))));
      progress(out, iterations + " snapshots");
      row(
          table,
          "snapshot: POST /v1/sessions/{id}/snapshots",
          measure(
              used,
              iterations,
              i -> client.snapshot(SOURCE, BenchClient.benchId("snap", i)),
              i -> client.deleteSnapshot(BenchClient.benchId("snap", i))));
      client.snapshot(SOURCE, "bench-base");
      progress(out, iterations + " creates from a snapshot");
      row(
          table,
          "create from_snapshot: POST /v1/sessions/{id}",
          measure(
              used,
              iterations,
              i -> client.createFrom(BenchClient.benchId("restored", i), "bench-base"),
              i -> client.delete(BenchClient.benchId("restored", i))));
      client.deleteSnapshot("bench-base");
      row(table, "floor: cp -a of the workspace on the data dir's file system", fullCopy(box, 3));
    }
    docker(table, iterations, out);
    out.println();
    out.println(
        "store: " + store + "; " + iterations + " iterations after " + WARMUP + " warm-up\n");
    out.print(table.markdown());
    return 0;
  }

  /** The Docker rows, when Docker runs here with the image; a line says why when it does not. */
  private static void docker(Table table, int iterations, PrintStream out)
      throws IOException, InterruptedException {
    if (!Files.exists(Path.of(DOCKER_SOCKET))) {
      out.println("no Docker socket at " + DOCKER_SOCKET + ": the Docker rows are left out");
      return;
    }
    Map<String, String> settings =
        Map.of("backend", "docker", "image", DOCKER_IMAGE, "docker_host", DOCKER_SOCKET);
    try (LocalBox box = LocalBox.start(2 * iterations + 2 * WARMUP + 6, settings)) {
      BenchClient client = box.client();
      Path dockerRoot = Path.of(DOCKER_ROOT);
      Disk used =
          new Disk(
              Files.isDirectory(dockerRoot)
                  ? List.of(storeOf(box), dockerRoot)
                  : List.of(storeOf(box)));
      String readOnly = "bench-fork-read-only";
      progress(out, "Docker: writing 1 GiB in a read-only-root source's workspace");
      client.run(readOnly, WORKSPACE_GIB, 600);
      progress(out, "Docker: " + iterations + " forks of it");
      row(
          table,
          "docker fork, read-only root (the workspace only)",
          measure(
              used,
              iterations,
              i -> client.fork(readOnly, BenchClient.benchId("ro-fork", i)),
              i -> client.delete(BenchClient.benchId("ro-fork", i))));
      client.delete(readOnly);
      progress(out, "Docker: 1 GiB in a workspace and " + ROOT_MIB + " MiB in a writable root");
      client.runWritable(
          SOURCE,
          WORKSPACE_GIB + " && head -c " + ROOT_MIB + "M /dev/urandom > /var/tmp/root.bin",
          600);
      String what = ", " + ROOT_MIB + " MiB written to the root";
      row(
          table,
          "docker fork" + what,
          measure(
              used,
              iterations,
              i -> client.fork(SOURCE, BenchClient.benchId("fork", i)),
              i -> client.delete(BenchClient.benchId("fork", i))));
      row(
          table,
          "docker snapshot" + what,
          measure(
              used,
              iterations,
              i -> client.snapshot(SOURCE, BenchClient.benchId("snap", i)),
              i -> client.deleteSnapshot(BenchClient.benchId("snap", i))));
      client.snapshot(SOURCE, "bench-base");
      row(
          table,
          "docker create from_snapshot" + what,
          measure(
              used,
              iterations,
              i -> client.createFrom(BenchClient.benchId("restored", i), "bench-base", false),
              i -> client.delete(BenchClient.benchId("restored", i))));
      client.deleteSnapshot("bench-base");
    }
  }

  /** The workspace store of {@code box}, or its state dir where it has no store. */
  private static Path storeOf(LocalBox box) {
    Path store = box.stateDir().resolve("store");
    return Files.isDirectory(store) ? store : box.stateDir();
  }

  /** Times {@code timed}, and reads the disk it took before {@code undo} gives it back, untimed. */
  private static Cost measure(Disk disk, int iterations, Sampler.Action timed, Sampler.Action undo)
      throws IOException, InterruptedException {
    double[] most = {0};
    long[] before = {disk.used()};
    Latencies latencies =
        Sampler.measure(
            WARMUP,
            iterations,
            timed,
            i -> {
              most[0] = Math.max(most[0], (disk.used() - before[0]) / (double) MIB);
              undo.run(i);
              before[0] = disk.used();
            });
    return new Cost(latencies, most[0]);
  }

  /** A full copy of the source's workspace, where a server without a store would make one. */
  private static Cost fullCopy(LocalBox box, int iterations)
      throws IOException, InterruptedException {
    Path workspace;
    try (var found = Files.find(box.stateDir(), 4, (p, a) -> p.endsWith("data.bin"))) {
      workspace = Objects.requireNonNull(found.findFirst().orElseThrow().getParent());
    }
    Path target = box.stateDir().resolve("bench-copy");
    Disk disk = new Disk(List.of(box.stateDir()));
    return measure(
        disk,
        iterations,
        i -> ProcessFloors.run(List.of("cp", "-a", workspace.toString(), target.toString())),
        i -> ProcessFloors.run(List.of("rm", "-rf", target.toString())));
  }

  /** The bytes used on the file systems of {@code dirs} (each counted once), once on disk. */
  private record Disk(List<Path> dirs) {
    long used() throws IOException, InterruptedException {
      Map<FileStore, Path> stores = new LinkedHashMap<>();
      for (Path dir : dirs) {
        stores.putIfAbsent(Files.getFileStore(dir), dir);
      }
      long used = 0;
      for (Map.Entry<FileStore, Path> store : stores.entrySet()) {
        ProcessFloors.run(List.of("sync", "-f", store.getValue().toString()));
        used += store.getKey().getTotalSpace() - store.getKey().getUnallocatedSpace();
      }
      return used;
    }
  }

  private static void row(Table table, String name, Cost cost) {
    Latencies l = cost.latencies();
    table.row(name, format(l.p50()), format(l.p95()), format(cost.maxExtraMib()));
  }

  private static String format(double value) {
    return String.format(Locale.ROOT, "%.1f", value);
  }

  private static void progress(PrintStream out, String what) {
    out.println("running " + what + " ...");
    out.flush();
  }
}
