package dev.box.backend.microvm;

import dev.box.core.StateFiles;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decides whether VMs run under KVM or TCG. KVM is used only where a test boot proved that it boots
 * this guest to its agent within {@link #TIMEOUT}: a {@code /dev/kvm} that opens is not enough (a
 * nested, paravirtual one can hang a stock kernel before its first message). The outcome is kept in
 * a file with what it was measured on (QEMU and the kernel, by path, size and time), so the boot is
 * tried once per pair, not once per server.
 */
final class KvmProbe {
  private static final Logger log = LoggerFactory.getLogger(KvmProbe.class);

  /** How long the test boot may take: a KVM boot takes well under a second. */
  static final Duration TIMEOUT = Duration.ofSeconds(30);

  /** The file, beside the VMs' files (or in the state dir when that is not writable). */
  static final String FILE = "kvm-probe";

  /** What runs the guest's instructions. */
  enum Accel {
    KVM,
    TCG
  }

  /**
   * The decision and why.
   *
   * @param accel KVM or TCG
   * @param why how it was decided, for the health report
   */
  record Decision(Accel accel, String why) {}

  /** Boots one VM under KVM to its agent within {@link #TIMEOUT}, then destroys it. */
  interface TestBoot {
    void boot() throws IOException, InterruptedException;
  }

  private KvmProbe() {}

  /**
   * The decision for {@code files}: the kept one when it was made on the same QEMU and kernel, else
   * {@code testBoot}'s outcome (kept in {@code keptIn} when it can be), or TCG without a boot when
   * {@code kvm} cannot be opened.
   */
  static Decision decide(MicrovmFiles files, Path kvm, Path keptIn, TestBoot testBoot)
      throws InterruptedException {
    if (!Files.isReadable(kvm) || !Files.isWritable(kvm)) {
      return new Decision(Accel.TCG, "no usable " + kvm);
    }
    String measuredOn = measuredOn(files);
    try {
      List<String> kept = Files.readAllLines(keptIn, StandardCharsets.UTF_8);
      if (kept.size() == 3 && kept.get(0).equals(measuredOn)) {
        return new Decision(Accel.valueOf(kept.get(1)), kept.get(2) + " (kept in " + keptIn + ")");
      }
    } catch (IOException | IllegalArgumentException e) {
      // Nothing kept, or something else: boot.
    }
    Decision decision;
    try {
      testBoot.boot();
      decision = new Decision(Accel.KVM, "a test boot under KVM reached the guest's agent");
    } catch (IOException e) {
      decision =
          new Decision(
              Accel.TCG,
              "a test boot under KVM did not reach the guest's agent within "
                  + TIMEOUT.toSeconds()
                  + " s: "
                  + String.valueOf(e.getMessage()).replaceAll("[\\r\\n]+", " "));
    }
    keep(keptIn, measuredOn, decision);
    return decision;
  }

  /** What a decision depends on: QEMU and the kernel, each by path, size and modification time. */
  private static String measuredOn(MicrovmFiles files) {
    StringBuilder key = new StringBuilder();
    for (Path file : List.of(files.qemu(), files.kernel())) {
      try {
        key.append(file)
            .append(' ')
            .append(Files.size(file))
            .append(' ')
            .append(Files.getLastModifiedTime(file).toMillis())
            .append(';');
      } catch (IOException e) {
        key.append(file).append(" ?;");
      }
    }
    return key.toString();
  }

  private static void keep(Path file, String measuredOn, Decision decision) {
    try {
      StateFiles.replace(
          file,
          String.join("\n", measuredOn, decision.accel().name(), decision.why() + "\n")
              .getBytes(StandardCharsets.UTF_8));
    } catch (IOException e) {
      log.warn("cannot keep the KVM probe's outcome in {}: {}", file, e.toString());
    }
  }
}
