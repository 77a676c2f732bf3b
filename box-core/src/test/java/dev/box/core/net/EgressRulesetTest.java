package dev.box.core.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.box.api.BoxEgress;
import dev.box.api.Cidr;
import java.util.List;
import org.junit.jupiter.api.Test;

class EgressRulesetTest {
  private static final List<Cidr> HOST = List.of(Cidr.parse("127.0.0.1"), Cidr.parse("192.0.2.2"));

  @Test
  void rules_rejectForbiddenHostAndPrivate_beforeTheSessionsOwnRules() {
    String text =
        EgressRuleset.render(
            EgressPolicy.parse("10.77.0.0/16", "203.0.113.0/24"),
            new BoxEgress(List.of(Cidr.parse("198.51.100.1")), List.of(Cidr.parse("0.0.0.0/0"))),
            HOST,
            List.of(Cidr.parse("10.0.2.2")),
            List.of(Cidr.parse("10.0.2.3")));

    List<String> v4 =
        text.lines().map(String::strip).filter(l -> l.startsWith("ip daddr")).toList();
    assertThat(v4)
        .containsExactly(
            "ip daddr { 10.0.2.3/32 } meta l4proto { tcp, udp } th dport 53 accept",
            "ip daddr { 0.0.0.0/8, 127.0.0.0/8, 169.254.0.0/16, 224.0.0.0/4, 240.0.0.0/4,"
                + " 192.0.2.2/32, 10.0.2.2/32 } reject with icmpx type admin-prohibited",
            "ip daddr { 203.0.113.0/24 } reject with icmpx type admin-prohibited",
            "ip daddr { 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, 100.64.0.0/10 } ip daddr != {"
                + " 10.77.0.0/16 } reject with icmpx type admin-prohibited",
            "ip daddr { 198.51.100.1/32 } accept",
            "ip daddr { 0.0.0.0/0 } reject with icmpx type admin-prohibited");
    assertThat(text).contains("oifname \"lo\" accept").contains("policy drop");
    assertThat(text.indexOf("oifname \"lo\" accept")).isLessThan(text.indexOf("ip daddr"));
  }

  @Test
  void blocksInsideAnotherOfTheSameRule_areLeftOut_asNftablesRequires() {
    assertThat(
            EgressRuleset.pick(
                List.of(
                    Cidr.parse("127.0.0.0/8"),
                    Cidr.parse("127.0.0.1"),
                    Cidr.parse("127.0.0.1"),
                    Cidr.parse("::1")),
                true))
        .containsExactly(Cidr.parse("127.0.0.0/8"));
  }

  @Test
  void theOperator_cannotOpenLoopbackLinkLocalOrMulticast() {
    for (String block : List.of("169.254.169.254/32", "127.0.0.0/8", "0.0.0.0/0", "fe80::/64")) {
      assertThatThrownBy(() -> EgressPolicy.parse(block, ""))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith("egress_allow ")
          .hasMessageContaining("which no sandbox may reach");
    }
    assertThat(EgressPolicy.parse("10.0.0.0/8, 192.168.1.0/24", "").allow()).hasSize(2);
  }

  @Test
  void aMalformedSetting_namesTheSetting() {
    assertThatThrownBy(() -> EgressPolicy.parse("", "10.0.0.0/8,example.invalid"))
        .hasMessageStartingWith("egress_deny: 'example.invalid' is not an IP address");
  }
}
