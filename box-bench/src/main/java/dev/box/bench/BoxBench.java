package dev.box.bench;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The Box benchmark: starts a Box server in this JVM and measures it over HTTP against a bare
 * bubblewrap spawn and a plain fork and exec, and its stdio relay over WebSocket against a plain
 * {@code cat} child, then prints tables with the targets met or missed. It is a measurement, not a
 * test: nothing fails on a slow machine.
 *
 * <p>Usage: {@code BoxBench [--quick] [--iterations-scale X] [--markdown FILE]}, or {@code BoxBench
 * --containers ...} for the container backends ({@link ContainerBench}), or {@code BoxBench
 * --nsjail [N]} for the nsjail backend ({@link NsjailBench}), or {@code BoxBench --microvm [N]} for
 * the microvm backend ({@link MicrovmBench}), or {@code BoxBench --fork [N]} for the cost of forks
 * and snapshots ({@link ForkBench}); {@code bench/run} builds the module and runs it.
 */
public final class BoxBench {
  /** Room for the memory measurement's idle sessions and more. */
  private static final int MAX_SESSIONS = 1100;

  private BoxBench() {}

  /** Runs the benchmark; exits 2 for a bad argument and 1 when the run fails. */
  public static void main(String[] args) {
    if (args.length > 0 && args[0].equals("--nsjail")) {
      System.exit(
          exitStatus(() -> NsjailBench.main(List.of(args).subList(1, args.length), System.out)));
      return;
    }
    if (args.length > 0 && args[0].equals("--microvm")) {
      System.exit(
          exitStatus(() -> MicrovmBench.main(List.of(args).subList(1, args.length), System.out)));
      return;
    }
    if (args.length > 0 && args[0].equals("--fork")) {
      System.exit(
          exitStatus(() -> ForkBench.main(List.of(args).subList(1, args.length), System.out)));
      return;
    }
    if (args.length > 0 && args[0].equals("--containers")) {
      System.exit(
          exitStatus(() -> ContainerBench.main(List.of(args).subList(1, args.length), System.out)));
      return;
    }
    BenchOptions options;
    try {
      options = BenchOptions.parse(List.of(args));
    } catch (IllegalArgumentException e) {
      System.err.println("box-bench: " + e.getMessage());
      System.err.println(BenchOptions.USAGE);
      System.exit(2);
      return;
    }
    System.exit(
        exitStatus(
            () -> {
              run(options, System.out);
              return 0;
            }));
  }

  /** A run that returns its exit status. */
  private interface BenchRun {
    int run() throws IOException, InterruptedException;
  }

  /** Runs {@code bench}; a failure is reported on stderr and is status 1. */
  private static int exitStatus(BenchRun bench) {
    try {
      return bench.run();
    } catch (IOException | RuntimeException e) {
      System.err.println("box-bench: the run failed: " + e.getMessage());
      e.printStackTrace();
      return 1;
    } catch (InterruptedException e) {
      System.err.println("box-bench: interrupted");
      return 1;
    }
  }

  /**
   * Runs every measurement, prints progress and then the report to {@code out}, and writes the
   * Markdown report when {@code options} asks for it. Every session is deleted and the server
   * closed before this returns, also when it throws, and on Ctrl-C.
   */
  static BenchReport run(BenchOptions options, PrintStream out)
      throws IOException, InterruptedException {
    MachineInfo machine = MachineInfo.probe();
    BenchReport report;
    try (LocalBox box = LocalBox.start(MAX_SESSIONS)) {
      Thread cleanup = new Thread(box::close, "box-bench-cleanup");
      Runtime.getRuntime().addShutdownHook(cleanup);
      try {
        report = measure(options, machine, box, out);
      } finally {
        removeHook(cleanup);
      }
    }
    out.println();
    out.print(report.text());
    Path markdown = options.markdown();
    if (markdown != null) {
      Files.writeString(markdown, report.markdown(), StandardCharsets.UTF_8);
      out.println("\nMarkdown written to " + markdown);
    }
    return report;
  }

  private static BenchReport measure(
      BenchOptions options, MachineInfo machine, LocalBox box, PrintStream out)
      throws IOException, InterruptedException {
    BenchClient client = box.client();
    String backend = describeBackend(client.status());
    int warmup = options.warmupIterations();
    int floors = options.floorIterations();
    List<String> bwrap = ProcessFloors.bareBwrapCommand();
    progress(out, "floor 1: " + floors + " bare bwrap spawns");
    Latencies floorBwrap = Sampler.measure(warmup, floors, i -> ProcessFloors.run(bwrap));
    List<String> forkExec = ProcessFloors.forkExecCommand();
    progress(out, "floor 2: " + floors + " fork+exec spawns");
    Latencies floorForkExec = Sampler.measure(warmup, floors, i -> ProcessFloors.run(forkExec));
    HttpScenarios http = new HttpScenarios(client, warmup);
    progress(out, "cold: " + options.coldIterations() + " new sessions, the pool refilled");
    Latencies cold = http.cold(options.coldIterations(), true);
    progress(out, "cold: " + options.coldIterations() + " new sessions back to back");
    Latencies coldBackToBack = http.cold(options.coldIterations(), false);
    progress(out, "cold: " + options.coldIterations() + " new sessions of LangBot's shape");
    Latencies coldLangBot = http.coldLangBotShape(options.coldIterations(), box.langBotWorkspace());
    Cold unpooled = measureUnpooled(options, out);
    progress(out, "warm: " + options.warmIterations() + " execs in one session");
    Latencies warm = http.warm(options.warmIterations());
    Latencies warmNsenter = measureNsenter(options, out);
    int clients = BenchOptions.CONCURRENT_CLIENTS;
    progress(out, "concurrent: " + clients + " clients x " + options.execsPerClient() + " execs");
    HttpScenarios.Concurrent concurrent = http.concurrent(clients, options.execsPerClient());
    RelayScenarios.Result relay = measureRelay(options, client, out);
    progress(out, "memory: " + options.memorySessions() + " idle sessions");
    MemoryScenario.Result memory = new MemoryScenario(client).measure(options.memorySessions());
    return new BenchReport(
        options,
        machine,
        backend,
        floorBwrap,
        floorForkExec,
        cold,
        coldLangBot,
        coldBackToBack,
        unpooled.cold(),
        unpooled.langBot(),
        warm,
        warmNsenter,
        concurrent,
        relay,
        memory);
  }

  /**
   * Warm execs again on a server whose processes start through nsenter ({@code exec_agent false}),
   * in the same run, so that what the exec agent saves is measured under the same load.
   */
  private static Latencies measureNsenter(BenchOptions options, PrintStream out)
      throws IOException, InterruptedException {
    try (LocalBox box =
        LocalBox.start(
            MAX_SESSIONS, Map.of("backend", "bwrap", "pool_size", "0", "exec_agent", "false"))) {
      progress(
          out, "warm, exec_agent false: " + options.warmIterations() + " execs in one session");
      return new HttpScenarios(box.client(), options.warmupIterations())
          .warm(options.warmIterations());
    }
  }

  /** Cold creates of the default shape and of LangBot's, on a server without pre-started ones. */
  private record Cold(Latencies cold, Latencies langBot) {}

  /**
   * The cold measurements again on a second server with {@code pool_size 0}, in the same run, so
   * that what the pool saves is measured under the same load.
   */
  private static Cold measureUnpooled(BenchOptions options, PrintStream out)
      throws IOException, InterruptedException {
    try (LocalBox box =
        LocalBox.start(MAX_SESSIONS, Map.of("backend", "bwrap", "pool_size", "0"))) {
      HttpScenarios http = new HttpScenarios(box.client(), options.warmupIterations());
      progress(out, "cold, pool_size 0: " + options.coldIterations() + " new sessions");
      Latencies cold = http.cold(options.coldIterations(), false);
      progress(
          out,
          "cold, pool_size 0: " + options.coldIterations() + " new sessions of LangBot's shape");
      return new Cold(
          cold, http.coldLangBotShape(options.coldIterations(), box.langBotWorkspace()));
    }
  }

  private static RelayScenarios.Result measureRelay(
      BenchOptions options, BenchClient client, PrintStream out)
      throws IOException, InterruptedException {
    RelayScenarios relay = new RelayScenarios(client, BenchOptions.ROUND_TRIP_WARMUP);
    int roundTrips = options.relayRoundTrips();
    progress(out, "floor 3: " + roundTrips + " line round trips through a plain cat");
    Latencies floor = relay.floorRoundTrips(roundTrips);
    progress(out, "relay: " + roundTrips + " line round trips through cat in a session");
    Latencies roundTrip = relay.relayRoundTrips(roundTrips);
    long rawBytes = options.relayRawBytes();
    progress(out, "floor 4: " + mib(rawBytes) + " through a plain pipe");
    RelayScenarios.Throughput floorRaw = relay.floorRaw(rawBytes);
    progress(out, "relay: " + mib(rawBytes) + " in raw mode");
    RelayScenarios.Throughput raw = relay.raw(rawBytes);
    progress(out, "relay: " + mib(options.relayLineBytes()) + " of 2-byte lines in line mode");
    RelayScenarios.Throughput lines = relay.lines(options.relayLineBytes());
    return new RelayScenarios.Result(floor, roundTrip, floorRaw, raw, lines);
  }

  private static String mib(long bytes) {
    return String.format(Locale.ROOT, "%.1f MiB", bytes / (1024.0 * 1024));
  }

  private static String describeBackend(JsonNode status) {
    JsonNode backend = status.path("backend");
    String enforced =
        backend.path("enforced").properties().stream()
            .map(e -> e.getKey() + "=" + e.getValue().asText())
            .sorted()
            .collect(Collectors.joining(" "));
    return backend.path("name").asText("?")
        + (backend.path("available").asBoolean() ? " (" : " UNAVAILABLE (")
        + backend.path("reason").asText()
        + "), enforced: "
        + enforced;
  }

  private static void progress(PrintStream out, String what) {
    out.println("running " + what + " ...");
    out.flush();
  }

  private static void removeHook(Thread hook) {
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException shuttingDown) {
      // The hook is running or has run: it closes the server.
    }
  }
}
