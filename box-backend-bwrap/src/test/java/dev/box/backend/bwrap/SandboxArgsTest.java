package dev.box.backend.bwrap;

import static org.assertj.core.api.Assertions.assertThat;

import dev.box.api.BoxEgress;
import dev.box.api.BoxNetworkMode;
import dev.box.core.backend.SandboxMount;
import dev.box.core.backend.SandboxSpec;
import dev.box.sandbox.NamespaceStart;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/** The security boundary's argument vector, read as text. */
class SandboxArgsTest {
  private static final Path ETC = Path.of("/srv/box/bwrap-etc");

  private static SandboxSpec spec(BoxNetworkMode network, List<SandboxMount> extra) {
    return new SandboxSpec(
        "s",
        "inst_s-1",
        "inst",
        "img",
        network,
        new SandboxMount(Path.of("/srv/box/workspaces/inst_s-1"), "/workspace", false),
        extra,
        true,
        1.0,
        256,
        64,
        BoxEgress.NONE,
        false,
        null);
  }

  private static List<String> argv(SandboxSpec spec, @Nullable Path guard) throws Exception {
    return SandboxArgs.build(Path.of("/usr/bin/bwrap"), spec, ETC, "box-x/inst_s-1", guard);
  }

  @Test
  void everySandbox_hasItsOwnNetworkNamespace_andAnUnmappedUserNamespaceThatWaits()
      throws Exception {
    for (BoxNetworkMode mode : BoxNetworkMode.values()) {
      List<String> a = argv(spec(mode, List.of()), null);
      assertThat(a).contains("--unshare-net", "--unshare-user", "--unshare-pid");
      assertThat(String.join(" ", a)).contains("--userns-block-fd 0");
      // bwrap must not map the user itself: the backend writes the maps (IdMaps).
      assertThat(a).doesNotContain("--uid", "--gid", "--share-net");
    }
  }

  @Test
  void theResolverFile_isMountedOnlyWithTheNetworkOn_andNeverTheHosts() throws Exception {
    String on = String.join(" ", argv(spec(BoxNetworkMode.ON, List.of()), null));
    String off = String.join(" ", argv(spec(BoxNetworkMode.OFF, List.of()), null));

    assertThat(on).contains("--ro-bind /srv/box/bwrap-etc/resolv.conf /etc/resolv.conf");
    assertThat(off).doesNotContain("resolv.conf");
    assertThat(on).doesNotContain("/etc/resolv.conf /etc/resolv.conf");
  }

  @Test
  void theHolder_dropsToTheSandboxUser_throughTheGuardWhenThereIsOne() throws Exception {
    List<String> withGuard = argv(spec(BoxNetworkMode.OFF, List.of()), Path.of("/srv/box/bin/g"));
    List<String> without = argv(spec(BoxNetworkMode.OFF, List.of()), null);

    int chdir = withGuard.indexOf("--chdir");
    int sep = chdir + 2 + withGuard.subList(chdir + 2, withGuard.size()).indexOf("--");
    assertThat(withGuard.subList(sep + 1, sep + 7))
        .containsExactly("/.box/box-guard", "--uid", "1000", "--gid", "1000", "--");
    assertThat(String.join(" ", withGuard)).contains("--ro-bind /srv/box/bin/g /.box/box-guard");
    assertThat(String.join(" ", without))
        .contains("/usr/bin/setpriv --reuid 1000 --regid 1000 --clear-groups --bounding-set -all")
        .contains("--no-new-privs -- /bin/sh -c")
        .doesNotContain("box-guard");
  }

  @Test
  void theHolder_isAFixedScriptThatSleeps_orTheAgentThatMakesTheHome() throws Exception {
    SandboxSpec spec = spec(BoxNetworkMode.OFF, List.of());
    List<String> plain = argv(spec, null);
    List<String> withAgent =
        SandboxArgs.build(
            Path.of("/usr/bin/bwrap"),
            spec,
            ETC,
            "box-x/inst_s-1",
            null,
            new NamespaceStart.AgentMounts(
                Path.of("/srv/box/bin/box-agent"), Path.of("/srv/box/agents/inst_s-1")));

    List<String> plainHolder = plain.subList(plain.size() - 5, plain.size());
    assertThat(plainHolder.get(0)).isEqualTo("-c");
    assertThat(plainHolder.get(1)).contains("echo ready");
    assertThat(plainHolder.subList(2, 5)).containsExactly("box-holder", "sleep", "infinity");
    assertThat(withAgent.subList(withAgent.size() - 5, withAgent.size()))
        .containsExactly("--", "/.box/box-agent", "--home", "/home/box", "/.box/agent/socket");
  }

  @Test
  void mountPointParents_areMadeReadableBeforeTheBind() throws Exception {
    List<String> a =
        argv(
            spec(
                BoxNetworkMode.OFF,
                List.of(new SandboxMount(Path.of("/data/ro"), "/mnt/deep/ro", true))),
            null);
    String text = String.join(" ", a);

    assertThat(text)
        .contains(
            "--perms 0755 --dir /mnt --perms 0755 --dir /mnt/deep --ro-bind /data/ro /mnt/deep/ro");
    assertThat(text).contains("--bind /srv/box/workspaces/inst_s-1 /workspace");
    assertThat(Collections.indexOfSubList(a, List.of("--remount-ro", "/")))
        .isGreaterThan(a.indexOf("/mnt/deep/ro"));
  }

  @Test
  void procSecrets_areMasked() throws Exception {
    String text = String.join(" ", argv(spec(BoxNetworkMode.OFF, List.of()), null));
    if (Path.of("/proc/kcore").toFile().exists()) {
      assertThat(text).contains("--ro-bind /dev/null /proc/kcore");
    }
    assertThat(text).contains("--ro-bind /dev/null /proc/keys");
    assertThat(text).doesNotContain("--bind /proc").doesNotContain("--dev-bind");
  }
}
