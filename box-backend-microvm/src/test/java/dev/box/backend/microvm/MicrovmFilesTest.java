package dev.box.backend.microvm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The manifest {@code scripts/microvm} writes, read as the backend reads it. */
class MicrovmFilesTest {
  @TempDir Path dir;

  private Path manifest(String... extra) throws IOException {
    for (String name : new String[] {"qemu", "vmlinuz", "modules", "root.ext4"}) {
      if (!Files.exists(dir.resolve(name))) {
        Files.createFile(dir.resolve(name));
      }
    }
    StringBuilder text =
        new StringBuilder()
            .append("BOX_MICROVM_QEMU=")
            .append(dir.resolve("qemu"))
            .append("\nBOX_MICROVM_KERNEL=")
            .append(dir.resolve("vmlinuz"))
            .append("\nBOX_MICROVM_MODULES=")
            .append(dir.resolve("modules"))
            .append("\nBOX_MICROVM_ROOTFS=")
            .append(dir.resolve("root.ext4"))
            .append("\nBOX_MICROVM_TSC_KHZ=2445404\n");
    for (String line : extra) {
      text.append(line).append('\n');
    }
    return Files.writeString(dir.resolve(MicrovmFiles.MANIFEST), text);
  }

  @Test
  void aManifestWithoutAcpi_isOneOfDebiansKernel_withAcpiOn() throws IOException {
    manifest();
    MicrovmFiles files = MicrovmFiles.read(dir);
    assertThat(files.acpi()).isTrue();
    assertThat(files.tscKhz()).isEqualTo(2445404);
    assertThat(argv(files, 1))
        .anySatisfy(arg -> assertThat(arg).startsWith("microvm,").endsWith(",rtc=on,acpi=on"));
  }

  @Test
  void theBuiltKernelsManifest_turnsAcpiOff_andTheDevicesGoOnTheCommandLine() throws IOException {
    manifest("BOX_MICROVM_ACPI=off");
    MicrovmFiles files = MicrovmFiles.read(dir);
    assertThat(files.acpi()).isFalse();
    assertThat(files.withRootfs(dir.resolve("other.ext4")).acpi()).isFalse();
    assertThat(argv(files, 1))
        .anySatisfy(arg -> assertThat(arg).startsWith("microvm,").endsWith(",rtc=on,acpi=off"));
  }

  @Test
  void anAcpiValueOtherThanOnOrOff_isRefused_namingIt() throws IOException {
    manifest("BOX_MICROVM_ACPI=maybe");
    assertThatThrownBy(() -> MicrovmFiles.read(dir))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("BOX_MICROVM_ACPI is on or off, not 'maybe'");
  }

  @Test
  void vcpus_areTheSessionsCpusRoundedUp_atMostEight_andWithoutAcpiTheTimerDevicesAreOn()
      throws IOException {
    manifest("BOX_MICROVM_ACPI=off");
    MicrovmFiles built = MicrovmFiles.read(dir);
    List<String> twoAndAHalf = argv(built, 2.5);

    assertThat(twoAndAHalf).containsSequence("-smp", "3");
    assertThat(twoAndAHalf).anySatisfy(arg -> assertThat(arg).contains(",pit=on,pic=on,"));
    assertThat(new GuestConfig(256, 64, 64, 2_000_000, List.of(), false).vcpus())
        .isEqualTo(GuestConfig.MAX_VCPUS);
  }

  /** The command of a booting VM of {@code files} with 256 MiB and {@code cpus}. */
  private static List<String> argv(MicrovmFiles files, double cpus) {
    return QemuCommand.of(
        files,
        "vm",
        new GuestConfig(256, 64, cpus, 2_000_000, List.of(), false),
        7000,
        KvmProbe.Accel.TCG,
        QemuCommand.Start.BOOT);
  }
}
