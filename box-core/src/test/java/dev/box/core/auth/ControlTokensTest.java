package dev.box.core.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class ControlTokensTest {
  private static final String FIRST = "first-token-0123456789-0123456789";
  private static final String SECOND = "second-token-0123456789-0123456789";

  @Test
  void accepts_exactlyOneOfTheTokens() {
    ControlTokens tokens = ControlTokens.of(List.of(FIRST, SECOND));

    assertThat(tokens.required()).isTrue();
    assertThat(tokens.accepts(FIRST)).isTrue();
    assertThat(tokens.accepts(SECOND)).isTrue();
    assertThat(tokens.accepts(FIRST + " ")).isFalse();
    assertThat(tokens.accepts(FIRST.substring(1))).isFalse();
    assertThat(tokens.accepts(FIRST.toUpperCase(java.util.Locale.ROOT))).isFalse();
    assertThat(tokens.accepts("")).isFalse();
    assertThat(tokens.accepts(null)).isFalse();
  }

  @Test
  void open_acceptsEverything_andRequiresNothing() {
    assertThat(ControlTokens.open().required()).isFalse();
    assertThat(ControlTokens.open().accepts(null)).isTrue();
  }

  @Test
  void noTokenOrABlankOne_isRefused() {
    assertThatThrownBy(() -> ControlTokens.of(List.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("at least one control token is required");
    assertThatThrownBy(() -> ControlTokens.of(List.of(FIRST, " ")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("a control token must not be blank");
  }

  @Test
  void toString_showsNoToken() {
    assertThat(ControlTokens.of(List.of(FIRST)).toString())
        .isEqualTo("ControlTokens[1 token(s)]")
        .doesNotContain(FIRST);
  }
}
