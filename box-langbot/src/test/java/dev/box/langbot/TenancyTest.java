package dev.box.langbot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.box.api.BoxValidationException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

class TenancyTest {
  private static final ActionContext CONTEXT = new ActionContext("inst-1", "ws-a", 3, null);

  @Test
  void physicalId_followsTheReferenceFormula() throws Exception {
    String hash =
        HexFormat.of()
            .formatHex(
                MessageDigest.getInstance("SHA-256")
                    .digest("inst-1\0ws-a".getBytes(StandardCharsets.UTF_8)));

    assertThat(Tenancy.physicalId(CONTEXT, " my session/α "))
        .isEqualTo("ws-" + hash.substring(0, 24) + "-g3-my-session");
  }

  @Test
  void physicalId_refusesIdsWithoutAValidCharacter() {
    assertThatThrownBy(() -> Tenancy.physicalId(CONTEXT, "  "))
        .isInstanceOf(BoxValidationException.class)
        .hasMessage("Box session_id must not be empty");
    assertThatThrownBy(() -> Tenancy.physicalId(CONTEXT, "///"))
        .isInstanceOf(BoxValidationException.class)
        .hasMessage("Box session_id must contain a valid character");
  }

  @Test
  void controlAuth_refusesWeakTokensAndPinsTheFirstInstance() {
    assertThatThrownBy(() -> new ControlAuth("short", null, null))
        .isInstanceOf(IllegalArgumentException.class);
    ControlAuth auth = new ControlAuth("t".repeat(32), null, null);

    assertThat(auth.acceptsToken("t".repeat(32))).isTrue();
    assertThat(auth.acceptsToken("t".repeat(31))).isFalse();
    assertThat(auth.acceptsToken(null)).isFalse();
    assertThat(auth.admit("first")).isTrue();
    assertThat(auth.admit("second")).isFalse();
    assertThat(auth.isTrusted("first")).isTrue();
  }
}
