package dev.box.backend.microvm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * What a micro-VM boots, as {@code scripts/microvm} prepared it and listed it in {@value #MANIFEST}
 * of its cache directory: QEMU, the guest kernel, the kernel's modules the guest's init loads, and
 * the read-only root file system every VM shares; and the host's TSC frequency, which the guest
 * kernel must be told: under TCG the guest's TSC runs at the host's, and without a legacy timer to
 * calibrate it against the kernel waits for one forever.
 *
 * @param qemu the {@code qemu-system-x86_64} binary
 * @param kernel the guest kernel (a bzImage)
 * @param modules the directory of the modules, named in the order they load
 * @param rootfs the root file system, an ext4 image
 * @param tscKhz the host's TSC frequency in kHz
 * @param acpi whether the machine describes its devices in ACPI tables (Debian's kernel, whose
 *     virtio-mmio driver is a module and cannot take them from the command line) or, without ACPI,
 *     on the kernel's command line (the guest kernel {@code scripts/microvm} builds, which has no
 *     ACPI: its boot is shorter)
 */
record MicrovmFiles(Path qemu, Path kernel, Path modules, Path rootfs, long tscKhz, boolean acpi) {
  /** The file of KEY=VALUE lines the script writes. */
  static final String MANIFEST = "microvm.env";

  /** The script's cache directory when {@code BOX_MICROVM_CACHE} names none. */
  static final Path DEFAULT_DIR = Path.of("/var/tmp/box-test-cache/microvm");

  private static final String TSC_KHZ = "BOX_MICROVM_TSC_KHZ";

  /** {@code on} or {@code off}; a manifest without it is one of Debian's kernel: on. */
  private static final String ACPI = "BOX_MICROVM_ACPI";

  private static final List<String> KEYS =
      List.of(
          "BOX_MICROVM_QEMU", "BOX_MICROVM_KERNEL", "BOX_MICROVM_MODULES", "BOX_MICROVM_ROOTFS");

  /**
   * The files {@code dir}'s manifest names.
   *
   * @throws IOException when there is no manifest, it lacks a key, or a file it names is missing;
   *     the message says which and how to make them
   */
  static MicrovmFiles read(Path dir) throws IOException {
    Path manifest = dir.resolve(MANIFEST);
    if (!Files.isRegularFile(manifest)) {
      throw new IOException("no " + manifest + ": run scripts/microvm to prepare the VMs' files");
    }
    Map<String, String> values = new HashMap<>();
    for (String line : Files.readAllLines(manifest)) {
      int equals = line.indexOf('=');
      if (equals > 0) {
        values.put(line.substring(0, equals), line.substring(equals + 1));
      }
    }
    Path[] paths = new Path[KEYS.size()];
    for (int i = 0; i < paths.length; i++) {
      String value = values.get(KEYS.get(i));
      if (value == null || !Files.exists(Path.of(value))) {
        throw new IOException(
            manifest
                + ": "
                + KEYS.get(i)
                + (value == null ? " is missing" : " names no file: " + value)
                + " (run scripts/microvm again)");
      }
      paths[i] = Path.of(value);
    }
    String tsc = values.getOrDefault(TSC_KHZ, "");
    if (!tsc.matches("[1-9][0-9]{0,8}")) {
      throw new IOException(
          manifest
              + ": "
              + TSC_KHZ
              + " is not a frequency: '"
              + tsc
              + "' (run scripts/microvm again)");
    }
    String acpi = values.getOrDefault(ACPI, "on");
    if (!acpi.equals("on") && !acpi.equals("off")) {
      throw new IOException(
          manifest + ": " + ACPI + " is on or off, not '" + acpi + "' (run scripts/microvm again)");
    }
    return new MicrovmFiles(
        paths[0], paths[1], paths[2], paths[3], Long.parseLong(tsc), acpi.equals("on"));
  }

  /**
   * These files with {@code root} as the root file system (a session's image's: {@link
   * ImageRoots}).
   */
  MicrovmFiles withRootfs(Path root) {
    return new MicrovmFiles(qemu, kernel, modules, root, tscKhz, acpi);
  }

  /** The directory {@code BOX_MICROVM_CACHE} names ({@code env}'s value), else the default. */
  static Path dir(@Nullable String env) {
    return env == null || env.isBlank() ? DEFAULT_DIR : Path.of(env.strip());
  }
}
