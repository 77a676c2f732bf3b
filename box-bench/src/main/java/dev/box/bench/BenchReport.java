package dev.box.bench;

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
 * @param cold a new session and one exec in it, over HTTP
 * @param warm one exec in an existing session, over HTTP
 * @param concurrent warm execs from many clients at once
 * @param memory the cost of idle sessions
 */
record BenchReport(
    BenchOptions options,
    MachineInfo machine,
    String backend,
    Latencies floorBwrap,
    Latencies floorForkExec,
    Latencies cold,
    Latencies warm,
    HttpScenarios.Concurrent concurrent,
    MemoryScenario.Result memory) {

  private static final double MIB = 1024.0 * 1024;

  /**
   * One target of the benchmark.
   *
   * @param name what is compared
   * @param value the measured value
   * @param limit the target
   * @param inclusive whether the value may equal the limit
   * @param stretch whether missing it is expected for now
   */
  record Target(String name, double value, double limit, boolean inclusive, boolean stretch) {
    boolean met() {
      return inclusive ? value <= limit : value < limit;
    }

    String limitText() {
      return (inclusive ? "<= " : "< ") + number(limit);
    }

    String result() {
      return (met() ? "PASS" : "MISS") + (stretch ? " (stretch)" : "");
    }
  }

  /** The targets, in the order they are printed. */
  List<Target> targets() {
    Latencies c = concurrent.latencies();
    return List.of(
        new Target("cold p50 / floor 1 p50", cold.p50() / floorBwrap.p50(), 2.0, true, false),
        new Target("warm p50 / floor 1 p50", warm.p50() / floorBwrap.p50(), 1.5, true, false),
        new Target("warm p50 / floor 2 p50", warm.p50() / floorForkExec.p50(), 3.0, true, true),
        new Target(
            "p99 / p50 at " + concurrent.clients() + "-way concurrency",
            c.p99() / c.p50(),
            2.5,
            true,
            false),
        new Target("memory per idle session (MiB)", memoryPerSession() / MIB, 2.0, false, false));
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
    latencyRow(table, "warm: exec true in a session (HTTP)", warm);
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
}
