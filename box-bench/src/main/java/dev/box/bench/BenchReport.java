package dev.box.bench;

import static dev.box.bench.BenchReport.Bound.AT_LEAST;
import static dev.box.bench.BenchReport.Bound.AT_MOST;
import static dev.box.bench.BenchReport.Bound.BELOW;

import java.util.List;
import java.util.Locale;

/**
 * The results of one run and their rendering as plain text or Markdown.
 *
 * @param options what was run
 * @param machine the machine it ran on
 * @param backend the backend as {@code GET /v1/status} reported it
 * @param floorBwrap floor 1: a bare bwrap spawn of /bin/true
 * @param floorForkExec floor 2: a plain fork and exec of /bin/true
 * @param cold a new session and one exec in it, over HTTP, the pool refilled before each
 * @param coldLangBot the same with the session shape LangBot sends (a {@code host_path} workspace,
 *     persistent, network off)
 * @param coldBackToBack {@code cold} with creates following each other at once: the pool drains,
 *     and some sessions start sandboxes of their own
 * @param coldUnpooled {@code cold} on a server with {@code pool_size 0}
 * @param coldLangBotUnpooled {@code coldLangBot} on a server with {@code pool_size 0}
 * @param warm one exec in an existing session, over HTTP
 * @param warmNsenter {@code warm} on a server with {@code exec_agent false}: through nsenter
 * @param concurrent warm execs from many clients at once
 * @param relay the stdio relay of managed processes: round trips and throughput
 * @param memory the cost of idle sessions
 */
record BenchReport(
    BenchOptions options,
    MachineInfo machine,
    String backend,
    Latencies floorBwrap,
    Latencies floorForkExec,
    Latencies cold,
    Latencies coldLangBot,
    Latencies coldBackToBack,
    Latencies coldUnpooled,
    Latencies coldLangBotUnpooled,
    Latencies warm,
    Latencies warmNsenter,
    HttpScenarios.Concurrent concurrent,
    RelayScenarios.Result relay,
    MemoryScenario.Result memory) {

  private static final double MIB = 1024.0 * 1024;

  /** How a value must compare with its target's limit. */
  enum Bound {
    BELOW("<"),
    AT_MOST("<="),
    AT_LEAST(">=");

    private final String symbol;

    Bound(String symbol) {
      this.symbol = symbol;
    }

    boolean holds(double value, double limit) {
      return switch (this) {
        case BELOW -> value < limit;
        case AT_MOST -> value <= limit;
        case AT_LEAST -> value >= limit;
      };
    }
  }

  /**
   * One target of the benchmark.
   *
   * @param name what is compared
   * @param value the measured value
   * @param bound how the value must compare with the limit
   * @param limit the target
   * @param stretch whether missing it is expected for now
   */
  record Target(String name, double value, Bound bound, double limit, boolean stretch) {
    boolean met() {
      return bound.holds(value, limit);
    }

    String limitText() {
      return bound.symbol + " " + number(limit);
    }

    String result() {
      return (met() ? "PASS" : "MISS") + (stretch ? " (stretch)" : "");
    }

    /** This target as a stretch: missing it is expected for now. */
    Target asStretch() {
      return new Target(name, value, bound, limit, true);
    }
  }

  /** The targets, in the order they are printed. */
  List<Target> targets() {
    Latencies c = concurrent.latencies();
    double coldOverFloor1 = cold.p50() / floorBwrap.p50();
    double warmOverFloor2 = warm.p50() / floorForkExec.p50();
    String concurrency = concurrent.clients() + "-way concurrency";
    return List.of(
        target("cold p50 / floor 1 p50", coldOverFloor1, AT_MOST, 1.0),
        target(
            "cold, LangBot's shape p50 / floor 1 p50",
            coldLangBot.p50() / floorBwrap.p50(),
            AT_MOST,
            1.0),
        target("cold p50 / floor 1 p50 (moonshot)", coldOverFloor1, AT_MOST, 0.5).asStretch(),
        target("warm p50 / floor 2 p50", warmOverFloor2, AT_MOST, 2.0),
        target("warm p50 / floor 2 p50 (moonshot)", warmOverFloor2, AT_MOST, 1.5).asStretch(),
        target(
            "throughput at " + concurrency + " (execs/s)",
            concurrent.execsPerSecond(),
            AT_LEAST,
            500),
        target("p99 / p50 at " + concurrency, c.p99() / c.p50(), AT_MOST, 2.5),
        target("relay round trip p50 (ms)", relay.roundTrip().p50(), BELOW, 1.0),
        target(
            "relay throughput, raw mode (MB/s)", relay.raw().megabytesPerSecond(), AT_LEAST, 200),
        target("memory per idle session (MiB)", memoryPerSession() / MIB, AT_MOST, 1.0));
  }

  /** A target that is to be met now, not a stretch. */
  private static Target target(String name, double value, Bound bound, double limit) {
    return new Target(name, value, bound, limit, false);
  }

  /** Heap growth plus sandbox Pss per session, in bytes. */
  double memoryPerSession() {
    return memory.heapBytes() + memory.pssBytes();
  }

  /** The report as plain text, for a terminal. */
  String text() {
    StringBuilder out = new StringBuilder();
    out.append("Box benchmark (iterations scale ").append(number(options.scale())).append(")\n");
    machine.lines().forEach(line -> out.append(line).append('\n'));
    out.append("backend:      ").append(backend).append("\n\n");
    out.append(latencyTable().text()).append(throughputLine()).append("\n\n");
    out.append(roundTripTable().text()).append(relayCostLine()).append("\n\n");
    out.append(relayThroughputTable().text()).append('\n');
    out.append(memoryTable().text()).append(createLine()).append("\n\n");
    out.append(targetTable().text());
    return out.toString();
  }

  /** The report as Markdown. */
  String markdown() {
    StringBuilder out = new StringBuilder("# Box benchmark\n\n");
    out.append("Iterations scale ").append(number(options.scale())).append(".\n\n");
    machine
        .lines()
        .forEach(line -> out.append("- ").append(line.replaceAll(" +", " ")).append('\n'));
    out.append("- backend: ").append(backend).append("\n\n");
    out.append("## Latency\n\n").append(latencyTable().markdown()).append('\n');
    out.append(throughputLine()).append("\n\n");
    out.append("## Relay\n\n").append(roundTripTable().markdown()).append('\n');
    out.append(relayCostLine()).append("\n\n");
    out.append(relayThroughputTable().markdown()).append('\n');
    out.append("## Memory\n\n").append(memoryTable().markdown()).append('\n');
    out.append(createLine()).append("\n\n");
    out.append("## Targets\n\n").append(targetTable().markdown());
    return out.toString();
  }

  private Table latencyTable() {
    Table table = new Table("latency (ms)", "count", "p50", "p95", "p99");
    latencyRow(table, "floor 1: bare bwrap /bin/true", floorBwrap);
    latencyRow(table, "floor 2: fork+exec /bin/true", floorForkExec);
    latencyRow(table, "cold: new session + exec true (HTTP)", cold);
    latencyRow(table, "cold, LangBot's shape (pooled)", coldLangBot);
    latencyRow(table, "cold, back to back (pool drains)", coldBackToBack);
    latencyRow(table, "cold, pool_size 0", coldUnpooled);
    latencyRow(table, "cold, LangBot's shape, pool_size 0", coldLangBotUnpooled);
    latencyRow(table, "warm: exec true in a session (HTTP)", warm);
    latencyRow(table, "warm, exec_agent false (nsenter)", warmNsenter);
    latencyRow(
        table,
        String.format(
            Locale.ROOT,
            "concurrent: %d clients x %d execs (HTTP)",
            concurrent.clients(),
            concurrent.execsPerClient()),
        concurrent.latencies());
    return table;
  }

  private static void latencyRow(Table table, String name, Latencies l) {
    table.row(name, Integer.toString(l.count()), number(l.p50()), number(l.p95()), number(l.p99()));
  }

  private String throughputLine() {
    return String.format(
        Locale.ROOT,
        "throughput at %d-way concurrency: %s execs/s",
        concurrent.clients(),
        number(concurrent.execsPerSecond()));
  }

  private Table roundTripTable() {
    Table table = new Table("relay round trip (ms)", "count", "p50", "p95", "p99");
    preciseRow(table, "floor 3: a line through a plain cat child", relay.floor());
    preciseRow(table, "relay: text frame -> cat in a session -> text frame", relay.roundTrip());
    return table;
  }

  /** A latency row with microseconds: the relay's round trips are well under a millisecond. */
  private static void preciseRow(Table table, String name, Latencies l) {
    table.row(
        name, Integer.toString(l.count()), precise(l.p50()), precise(l.p95()), precise(l.p99()));
  }

  private String relayCostLine() {
    return "the relay's own cost at p50 (relay p50 - floor 3 p50): "
        + precise(relay.roundTrip().p50() - relay.floor().p50())
        + " ms";
  }

  private Table relayThroughputTable() {
    Table table = new Table("relay throughput", "MiB", "messages", "seconds", "MB/s", "messages/s");
    throughputRow(table, "floor 4: head -c N /dev/zero, 64 KiB pipe reads", relay.floorRaw());
    throughputRow(table, "raw: head -c N /dev/zero, binary frames", relay.raw());
    throughputRow(table, "line (info): yes | head -c N, a text frame per line", relay.lines());
    return table;
  }

  private static void throughputRow(Table table, String name, RelayScenarios.Throughput t) {
    table.row(
        name,
        number(t.bytes() / MIB),
        Long.toString(t.messages()),
        number(t.seconds()),
        number(t.megabytesPerSecond()),
        String.format(Locale.ROOT, "%.0f", t.messagesPerSecond()));
  }

  private Table memoryTable() {
    return new Table("memory, " + memory.sessions() + " idle sessions", "per session")
        .row("server JVM heap growth", kib(memory.heapBytes()))
        .row(
            String.format(
                Locale.ROOT, "sandbox processes Pss (%.1f processes)", memory.processes()),
            kib(memory.pssBytes()))
        .row("total: heap + Pss", kib(memoryPerSession()))
        .row(
            "host MemAvailable drop (info: kernel memory too, noisy)",
            kib(memory.memAvailableBytes()));
  }

  private String createLine() {
    return String.format(
        Locale.ROOT,
        "created %d sessions one after another in %s s (%s sessions/s)",
        memory.sessions(),
        number(memory.createSeconds()),
        number(memory.sessions() / memory.createSeconds()));
  }

  private Table targetTable() {
    Table table = new Table("goal", "value", "target", "result").alignLeft(3);
    for (Target t : targets()) {
      table.row(t.name(), number(t.value()), t.limitText(), t.result());
    }
    return table;
  }

  private static String kib(double bytes) {
    return String.format(Locale.ROOT, "%.1f KiB", bytes / 1024);
  }

  private static String number(double value) {
    return String.format(Locale.ROOT, "%.2f", value);
  }

  private static String precise(double value) {
    return String.format(Locale.ROOT, "%.3f", value);
  }
}
