package dev.box.backend.microvm;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link KvmProbe}'s decision and what it keeps. The test boot is a function here: booting under
 * KVM is what the backend's own tests do where the host allows it; this checks when a boot is
 * tried, what its outcome decides, and that the outcome is kept for the same QEMU and kernel only.
 * A regular file stands in for {@code /dev/kvm}, since only whether it opens is checked.
 */
class KvmProbeTest {
  @TempDir Path dir;

  private MicrovmFiles files() throws IOException {
    Path qemu = dir.resolve("qemu");
    Path kernel = dir.resolve("vmlinuz");
    if (!Files.exists(kernel)) {
      Files.writeString(qemu, "qemu");
      Files.writeString(kernel, "kernel");
    }
    return new MicrovmFiles(qemu, kernel, dir, dir.resolve("rootfs"), 1_000_000, true);
  }

  private final AtomicInteger boots = new AtomicInteger();

  /** The decision with a {@code /dev/kvm} that opens, kept in the test's directory. */
  private KvmProbe.Decision decide(KvmProbe.TestBoot testBoot) throws Exception {
    Path kvm = dir.resolve("kvm");
    if (!Files.exists(kvm)) {
      Files.writeString(kvm, "");
    }
    return KvmProbe.decide(files(), kvm, dir.resolve(KvmProbe.FILE), testBoot);
  }

  @Test
  void withoutAUsableKvm_itIsTcg_andNothingBoots() throws Exception {
    KvmProbe.Decision decision =
        KvmProbe.decide(
            files(), dir.resolve("no-kvm"), dir.resolve(KvmProbe.FILE), boots::incrementAndGet);

    assertThat(decision.accel()).isEqualTo(KvmProbe.Accel.TCG);
    assertThat(decision.why()).contains("no usable");
    assertThat(boots).hasValue(0);
  }

  @Test
  void aTestBootThatWorks_makesItKvm_andIsKeptForTheSameQemuAndKernel() throws Exception {
    assertThat(decide(boots::incrementAndGet).accel()).isEqualTo(KvmProbe.Accel.KVM);
    KvmProbe.Decision again = decide(boots::incrementAndGet);

    assertThat(again.accel()).isEqualTo(KvmProbe.Accel.KVM);
    assertThat(again.why()).contains("kept in " + dir.resolve(KvmProbe.FILE));
    assertThat(boots).hasValue(1);
  }

  @Test
  void aTestBootThatFails_makesItTcg_sayingWhy_andAnotherKernelIsTriedAgain() throws Exception {
    KvmProbe.TestBoot hangs =
        () -> {
          boots.incrementAndGet();
          throw new IOException("the VM's agent did not answer\nwithin 30 s");
        };

    KvmProbe.Decision decision = decide(hangs);
    assertThat(decision.accel()).isEqualTo(KvmProbe.Accel.TCG);
    assertThat(decision.why()).contains("did not reach", "did not answer within 30 s");
    assertThat(decide(hangs).accel()).isEqualTo(KvmProbe.Accel.TCG);
    assertThat(boots).hasValue(1);

    Files.writeString(dir.resolve("vmlinuz"), "another kernel");
    assertThat(decide(boots::incrementAndGet).accel()).isEqualTo(KvmProbe.Accel.KVM);
    assertThat(boots).hasValue(2);
  }
}
