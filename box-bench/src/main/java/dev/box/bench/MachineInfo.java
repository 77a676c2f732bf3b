package dev.box.bench;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * The machine a run measured, as printed at the top of the report.
 *
 * @param cpus the output of {@code nproc}
 * @param memory the total memory from /proc/meminfo
 * @param kernel the output of {@code uname -r}
 * @param bwrap the output of {@code bwrap --version}
 * @param java the Java runtime and how it starts processes
 */
record MachineInfo(String cpus, String memory, String kernel, String bwrap, String java) {

  /** Asks the host; a question it cannot answer reads "unknown (why)". */
  static MachineInfo probe() {
    return new MachineInfo(
        command("nproc"),
        totalMemory(),
        command("uname", "-r"),
        command("bwrap", "--version"),
        String.format(
            Locale.ROOT,
            "%s (%s, %s), process launch %s",
            Runtime.version(),
            System.getProperty("java.vendor", "?"),
            System.getProperty("java.vm.name", "?"),
            System.getProperty("jdk.lang.Process.launchMechanism", "default")));
  }

  /** The lines printed at the top of the report. */
  List<String> lines() {
    return List.of(
        "cpus (nproc): " + cpus,
        "memory:       " + memory,
        "kernel:       " + kernel,
        "bwrap:        " + bwrap,
        "java:         " + java);
  }

  private static String totalMemory() {
    try {
      double gib = MemoryScenario.meminfoBytes("MemTotal:") / (1024.0 * 1024 * 1024);
      return String.format(Locale.ROOT, "%.1f GiB", gib);
    } catch (IOException e) {
      return "unknown (" + e.getMessage() + ")";
    }
  }

  private static String command(String... argv) {
    try {
      Process process =
          new ProcessBuilder(argv)
              .redirectErrorStream(true)
              .redirectInput(new File("/dev/null"))
              .start();
      String output =
          new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        return "unknown (" + argv[0] + " did not exit)";
      }
      return process.exitValue() == 0 ? output : "unknown (" + output + ")";
    } catch (IOException e) {
      return "unknown (" + e.getMessage() + ")";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "unknown (interrupted)";
    }
  }
}
