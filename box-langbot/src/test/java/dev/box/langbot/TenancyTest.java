package dev.box.langbot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.box.api.BoxValidationException;
import dev.box.core.auth.ControlTokens;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
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
    assertThatThrownBy(() -> ControlAuth.langbotToken(Map.of("LANGBOT_BOX_CONTROL_TOKEN", "short")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("LANGBOT_BOX_CONTROL_TOKEN must be at least 32 characters without whitespace");
    String token =
        Objects.requireNonNull(
            ControlAuth.langbotToken(Map.of("LANGBOT_BOX_CONTROL_TOKEN", "t".repeat(32) + "\n")));
    assertThat(token).isEqualTo("t".repeat(32));
    ControlAuth auth = new ControlAuth(ControlTokens.of(List.of(token)), true, null);

    assertThat(auth.acceptsToken("t".repeat(32))).isTrue();
    assertThat(auth.acceptsToken("t".repeat(31))).isFalse();
    assertThat(auth.acceptsToken(null)).isFalse();
    assertThat(auth.admit("first")).isTrue();
    assertThat(auth.admit("second")).isFalse();
    assertThat(auth.isTrusted("first")).isTrue();
  }
}
