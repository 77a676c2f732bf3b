package dev.box.backend.nsjail;

import static org.assertj.core.api.Assertions.assertThat;

import dev.box.core.backend.SandboxMount;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The jail's configuration, the security boundary's description, read as text. */
class JailConfigTest {
  private static final Path ETC = Path.of("/srv/box/nsjail-etc");
  private static final Path SETPRIV = Path.of("/usr/bin/setpriv");

  private static String render(boolean readOnlyRoot, boolean networkOn, List<SandboxMount> mounts) {
    return JailConfig.render(
        "box-nsjail-x/inst_s-1",
        2_000_000,
        readOnlyRoot,
        networkOn,
        ETC,
        Path.of("/srv/box/box-guard"),
        "/.box/guard",
        mounts,
        SETPRIV,
        null,
        JailConfig.HOLDER);
  }

  @Test
  void withTheExecAgent_itsMountsAreMade_andTheHolderRunsUnderTheGuard() {
    String text =
        JailConfig.render(
            "box-nsjail-x/inst_s-1",
            2_000_000,
            true,
            false,
            ETC,
            Path.of("/srv/box/box-guard"),
            "/.box/guard",
            List.of(),
            SETPRIV,
            new dev.box.sandbox.NamespaceStart.AgentMounts(
                Path.of("/srv/box/bin/box-agent"), Path.of("/srv/box/agents/inst_s-1")),
            JailConfig.AGENT_HOLDER);
    assertThat(text)
        .contains(
            "mount { src: \"/srv/box/bin/box-agent\" dst: \"/.box/box-agent\" is_bind: true rw:"
                + " false is_dir: false nosuid: true }")
        .contains(
            "mount { src: \"/srv/box/agents/inst_s-1\" dst: \"/.box/agent\" is_bind: true rw:"
                + " false is_dir: true nosuid: true }")
        .contains(
            "arg: \"--pdeathsig\" arg: \"KILL\" arg: \"--\" arg: \"/.box/guard\" arg: \"--\""
                + " arg: \"/bin/sh\" arg: \"-c\"")
        .contains(
            " arg: \"box-nsjail-x/inst_s-1\" arg: \"/.box/box-agent\" arg: \"/.box/agent/socket\""
                + " }\n");
  }

  @Test
  void theHolderRunsAsTheSandboxUser_mappedOntoTheUnprivilegedUid_withRootMappedForNsenterOnly() {
    String text = render(true, false, List.of());
    assertThat(text)
        .contains(
            "uidmap { inside_id: \"1000\" outside_id: \"2000000\" count: 1 }\n"
                + "uidmap { inside_id: \"0\" outside_id: \"0\" count: 1 }\n"
                + "gidmap { inside_id: \"1000\" outside_id: \"2000000\" count: 1 }\n"
                + "gidmap { inside_id: \"0\" outside_id: \"0\" count: 1 }\n");
    assertThat(text).doesNotContain("keep_caps").doesNotContain("disable_no_new_privs");
    assertThat(text).contains("clone_newnet: true").contains("clone_newcgroup: true");
  }

  @Test
  void nsjailsOwnTimeLimitIsOff_theServerTimesExecsOut() {
    assertThat(render(true, false, List.of())).contains("time_limit: 0\n");
  }

  @Test
  void theRootIsATmpfs_readOnlyUnlessAsked() {
    assertThat(render(true, false, List.of()))
        .contains("mount { dst: \"/\" fstype: \"tmpfs\" options: \"mode=0755\" rw: false");
    assertThat(render(false, false, List.of()))
        .contains("mount { dst: \"/\" fstype: \"tmpfs\" options: \"mode=1777\" rw: true");
  }

  @Test
  void resolvConf_onlyWithTheNetworkOn() {
    assertThat(render(true, false, List.of())).doesNotContain("/etc/resolv.conf");
    assertThat(render(true, true, List.of()))
        .contains("src: \"/srv/box/nsjail-etc/resolv.conf\" dst: \"/etc/resolv.conf\"");
  }

  @Test
  void mounts_keepTheirPathsWhole_andTheirMode() {
    String text =
        render(
            true,
            false,
            List.of(
                new SandboxMount(Path.of("/srv/a:b"), "/workspace", false),
                new SandboxMount(Path.of("/srv/ro"), "/data/ro", true)));
    assertThat(text)
        .contains("mount { src: \"/srv/a:b\" dst: \"/workspace\" is_bind: true rw: true")
        .contains("mount { src: \"/srv/ro\" dst: \"/data/ro\" is_bind: true rw: false");
  }

  @Test
  void theHolderDiesWithNsjail_andCarriesTheJailsTag() {
    assertThat(render(true, false, List.of()))
        .contains(
            "exec_bin { path: \"/usr/bin/setpriv\" arg: \"--pdeathsig\" arg: \"KILL\" arg: \"--\""
                + " arg: \"/bin/sh\" arg: \"-c\"")
        .contains(" arg: \"box-nsjail-x/inst_s-1\" }\n");
  }

  @Test
  void quote_escapesWhatTheTextFormatWouldReadOtherwise() {
    assertThat(JailConfig.quote("a\"b\\c")).isEqualTo("\"a\\\"b\\\\c\"");
    assertThat(JailConfig.quote("x\ny")).isEqualTo("\"x\\012y\"");
    assertThat(JailConfig.quote("é")).isEqualTo("\"\\303\\251\"");
  }
}
