package dev.box.backend.e2b;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.box.api.BoxValidationException;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Availability and LangBot's {@code box.e2b} section, which need no service to answer. */
class E2bBackendStatusTest {
  @TempDir Path state;

  @Test
  void withoutAKey_itIsUnavailableAndSaysHowToSetOne() {
    try (E2bBackend backend = unconfigured()) {
      assertThat(backend.status().available()).isFalse();
      assertThat(backend.status().reason()).contains("e2b_api_key").contains("E2B_API_KEY");
      assertThat(backend.status().enforced()).containsEntry("memory", "none");
    }
  }

  @Test
  void boxInitsSection_setsTheKeyUrlAndTemplate_andNeverShowsTheKey() {
    try (E2bBackend backend = unconfigured()) {
      backend.configure(
          Map.of("api_key", "k-123", "api_url", "https://api.cube.example", "template", "py"));

      assertThat(backend.status().available()).isTrue();
      assertThat(backend.status().reason())
          .isEqualTo("E2B sandboxes from template py at https://api.cube.example")
          .doesNotContain("k-123");
    }
  }

  @Test
  void anUnknownKeyOrABadUrl_isAValidationError() {
    try (E2bBackend backend = unconfigured()) {
      assertThatThrownBy(() -> backend.configure(Map.of("apikey", "x")))
          .isInstanceOf(BoxValidationException.class)
          .hasMessage("unknown e2b setting 'apikey' (known: api_key, api_url, template)");
      assertThatThrownBy(() -> backend.configure(Map.of("api_url", "ftp://x")))
          .isInstanceOf(BoxValidationException.class)
          .hasMessage("e2b_api_url must be an http(s) URL, not 'ftp://x'");
    }
  }

  private E2bBackend unconfigured() {
    return new E2bBackend(
        E2bSettings.read(Map.of(), Map.of()),
        state,
        "i",
        1000,
        Executors.newSingleThreadScheduledExecutor());
  }
}
