package dev.box.backend.e2b;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class E2bSettingsTest {
  @Test
  void theEnvironment_winsOverConfiguredKeyAndUrl() {
    E2bSettings s =
        E2bSettings.read(
            Map.of("e2b_api_key", "from-file", "e2b_api_url", "https://api.file.example"),
            Map.of("E2B_API_KEY", "from-env", "E2B_API_URL", "https://api.env.example/"));

    assertThat(s.apiKey()).isEqualTo("from-env");
    assertThat(s.apiUrl()).isEqualTo("https://api.env.example");
  }

  @Test
  void withNothingConfigured_thereIsNoKey_andE2bsOwnDefaults() {
    E2bSettings s = E2bSettings.read(Map.of(), Map.of());

    assertThat(s.apiKey()).isNull();
    assertThat(s.apiUrl()).isEqualTo(E2bSettings.DEFAULT_API_URL);
    assertThat(s.template()).isEqualTo("base");
    assertThat(s.defaultDomain()).isEqualTo("e2b.app");
  }

  @Test
  void toString_neverShowsTheKey() {
    E2bSettings s = E2bSettings.read(Map.of("e2b_api_key", "e2b_secret_123"), Map.of());

    assertThat(s.toString()).doesNotContain("e2b_secret_123").contains("apiKey=<set>");
  }

  @Test
  void aUrlThatIsNotHttp_isRefusedNamingTheKey() {
    assertThatThrownBy(() -> E2bSettings.read(Map.of("e2b_api_url", "file:///etc"), Map.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("e2b_api_url must be an http(s) URL, not 'file:///etc'");
  }
}
