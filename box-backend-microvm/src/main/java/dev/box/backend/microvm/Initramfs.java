package dev.box.backend.microvm;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * Writes the initramfs every VM of a server boots: the guest's init ({@code box-vminit}) as {@code
 * /init}, the kernel's modules in {@code /modules}, and box-guard and box-agent in {@code /box}. It
 * is a cpio archive in the kernel's "newc" format, which the kernel unpacks into its first root;
 * nothing in it is secret (the agent's secret is on each VM's own config disk).
 */
final class Initramfs {
  private static final int DIRECTORY = 0040755;
  private static final int EXECUTABLE = 0100755;
  private static final int FILE = 0100644;

  private final OutputStream out;
  private int inode = 1;
  private long written;

  private Initramfs(OutputStream out) {
    this.out = out;
  }

  /**
   * Writes the initramfs to {@code target} (through a temporary file renamed into place).
   *
   * @param init the guest's init
   * @param modules the directory of the modules ({@code *.ko}, in the order of their names)
   * @param guard box-guard, static
   * @param agent box-agent, static
   */
  static void write(Path target, byte[] init, Path modules, Path guard, Path agent)
      throws IOException {
    Path temp = Files.createTempFile(target.getParent(), ".initramfs-", ".tmp");
    try {
      try (OutputStream file = new BufferedOutputStream(Files.newOutputStream(temp))) {
        Initramfs cpio = new Initramfs(file);
        cpio.entry("init", EXECUTABLE, init);
        cpio.entry("modules", DIRECTORY, new byte[0]);
        List<Path> kos;
        try (Stream<Path> list = Files.list(modules)) {
          kos = list.filter(p -> p.getFileName().toString().endsWith(".ko")).sorted().toList();
        }
        for (Path ko : kos) {
          cpio.entry("modules/" + ko.getFileName(), FILE, Files.readAllBytes(ko));
        }
        cpio.entry("box", DIRECTORY, new byte[0]);
        cpio.entry("box/box-guard", EXECUTABLE, Files.readAllBytes(guard));
        cpio.entry("box/box-agent", EXECUTABLE, Files.readAllBytes(agent));
        cpio.entry("TRAILER!!!", 0, new byte[0]);
      }
      // Readable by all: QEMU, which runs as the sandbox user, reads it; nothing in it is secret.
      Files.setPosixFilePermissions(temp, PosixFilePermissions.fromString("rw-r--r--"));
      Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } finally {
      Files.deleteIfExists(temp);
    }
  }

  /** One entry: its header (13 fields of 8 hex digits), name, and data, each padded to 4 bytes. */
  private void entry(String name, int mode, byte[] data) throws IOException {
    byte[] nameBytes = (name + "\0").getBytes(StandardCharsets.US_ASCII);
    StringBuilder header = new StringBuilder("070701");
    long[] fields = {inode++, mode, 0, 0, 1, 0, data.length, 0, 0, 0, 0, nameBytes.length, 0};
    for (long field : fields) {
      header.append(String.format(Locale.ROOT, "%08X", field));
    }
    put(header.toString().getBytes(StandardCharsets.US_ASCII));
    put(nameBytes);
    pad();
    put(data);
    pad();
  }

  private void put(byte[] bytes) throws IOException {
    out.write(bytes);
    written += bytes.length;
  }

  private void pad() throws IOException {
    while (written % 4 != 0) {
      out.write(0);
      written++;
    }
  }
}
