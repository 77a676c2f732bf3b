package dev.box.bench;

import dev.box.api.BoxJson;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The measurements of Box over HTTP: cold and warm execs, and execs from many clients at once. Each
 * measurement deletes its sessions when it succeeds; after a failure {@link LocalBox#close()} does.
 */
final class HttpScenarios {
  private static final long CONCURRENT_TIMEOUT_MINUTES = 10;

  private final BenchClient client;
  private final int warmup;

  HttpScenarios(BenchClient client, int warmup) {
    this.client = client;
    this.warmup = warmup;
  }

  /**
   * Creating a session and running {@code true} in it, one request with a fresh session id each
   * time; the session is deleted after each iteration, untimed, and (with {@code refilled}) the
   * next waits, untimed, until the pool holds all its pre-started sandboxes again, as an agent's
   * creates find it. Without, creates follow each other as fast as they go, and the pool drains.
   */
  Latencies cold(int iterations, boolean refilled) throws IOException, InterruptedException {
    return Sampler.measure(
        warmup,
        iterations,
        i -> client.execTrue(coldId(i)),
        i -> {
          client.delete(coldId(i));
          if (refilled) {
            client.awaitPoolFull();
          }
        });
  }

  private static String coldId(int iteration) {
    return iteration < 0 ? "bench-cold-warmup" + -iteration : "bench-cold-" + iteration;
  }

  /**
   * As {@link #cold} with the pool refilled, with the session shape LangBot sends: network off,
   * persistent, and the workspace a {@code host_path} (the same directory for every session, as one
   * LangBot Workspace is).
   */
  Latencies coldLangBotShape(int iterations, Path workspace)
      throws IOException, InterruptedException {
    String fields =
        "\"network\":\"off\",\"persistent\":true,\"host_path\":"
            + BoxJson.newMapper().writeValueAsString(workspace.toString());
    return Sampler.measure(
        warmup,
        iterations,
        i -> client.execTrue(langBotId(i), fields),
        i -> {
          client.delete(langBotId(i));
          client.awaitPoolFull();
        });
  }

  private static String langBotId(int iteration) {
    return iteration < 0 ? "bench-langbot-warmup" + -iteration : "bench-langbot-" + iteration;
  }

  /** Running {@code true} in one existing session. */
  Latencies warm(int iterations) throws IOException, InterruptedException {
    String id = "bench-warm";
    client.create(id);
    Latencies latencies = Sampler.measure(warmup, iterations, i -> client.execTrue(id));
    client.delete(id);
    return latencies;
  }

  /** What {@link #concurrent} measured. */
  record Concurrent(int clients, int execsPerClient, Latencies latencies, double execsPerSecond) {}

  /**
   * {@code clients} virtual threads, each running {@code execsPerClient} warm {@code true} execs in
   * its own session, all started together once every session exists and is warmed up.
   */
  Concurrent concurrent(int clients, int execsPerClient) throws IOException, InterruptedException {
    List<String> ids = new ArrayList<>();
    for (int c = 0; c < clients; c++) {
      ids.add("bench-concurrent-" + c);
    }
    for (String id : ids) {
      client.create(id);
    }
    Concurrent result = runTogether(ids, execsPerClient);
    for (String id : ids) {
      client.delete(id);
    }
    return result;
  }

  private Concurrent runTogether(List<String> ids, int execsPerClient)
      throws IOException, InterruptedException {
    try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
      try {
        return runTogether(threads, ids, execsPerClient);
      } finally {
        // After a failure the other clients must not keep the executor's close() waiting.
        threads.shutdownNow();
      }
    }
  }

  private Concurrent runTogether(ExecutorService threads, List<String> ids, int execsPerClient)
      throws IOException, InterruptedException {
    CountDownLatch ready = new CountDownLatch(ids.size());
    CountDownLatch go = new CountDownLatch(1);
    int clientWarmup = Math.max(1, warmup / 10);
    List<Future<long[]>> results = new ArrayList<>();
    for (String id : ids) {
      results.add(threads.submit(() -> clientLoop(id, clientWarmup, execsPerClient, ready, go)));
    }
    if (!ready.await(CONCURRENT_TIMEOUT_MINUTES, TimeUnit.MINUTES)) {
      throw new IllegalStateException("the concurrent clients did not warm up in time");
    }
    long start = System.nanoTime();
    go.countDown();
    long[] all = new long[ids.size() * execsPerClient];
    int n = 0;
    for (Future<long[]> result : results) {
      long[] nanos = await(result);
      System.arraycopy(nanos, 0, all, n, nanos.length);
      n += nanos.length;
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    return new Concurrent(ids.size(), execsPerClient, Latencies.ofNanos(all), n / seconds);
  }

  private long[] clientLoop(
      String id, int clientWarmup, int execs, CountDownLatch ready, CountDownLatch go)
      throws IOException, InterruptedException {
    try {
      for (int i = 0; i < clientWarmup; i++) {
        client.execTrue(id);
      }
    } finally {
      ready.countDown();
    }
    if (!go.await(CONCURRENT_TIMEOUT_MINUTES, TimeUnit.MINUTES)) {
      throw new IllegalStateException("the concurrent run did not start in time");
    }
    long[] nanos = new long[execs];
    for (int i = 0; i < execs; i++) {
      long start = System.nanoTime();
      client.execTrue(id);
      nanos[i] = System.nanoTime() - start;
    }
    return nanos;
  }

  private static long[] await(Future<long[]> result) throws IOException, InterruptedException {
    try {
      return result.get(CONCURRENT_TIMEOUT_MINUTES, TimeUnit.MINUTES);
    } catch (TimeoutException e) {
      throw new IllegalStateException("a concurrent client did not finish in time", e);
    } catch (ExecutionException e) {
      switch (e.getCause()) {
        case IOException io -> throw io;
        case RuntimeException runtime -> throw runtime;
        case null, default -> throw new IllegalStateException("a concurrent client failed", e);
      }
    }
  }
}
