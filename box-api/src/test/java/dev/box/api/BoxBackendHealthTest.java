package dev.box.api;

import static dev.box.api.Validation.MAPPER;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The health answer keeps the candidates selection passed over in the order it considered them. */
class BoxBackendHealthTest {

  /** Ten candidates in an order no hash would give by chance. */
  static Map<String, String> candidates() {
    Map<String, String> notChosen = new LinkedHashMap<>();
    for (String name : List.of("k", "docker", "b", "podman", "z", "local", "a", "x", "m", "c")) {
      notChosen.put(name, "why not " + name);
    }
    return notChosen;
  }

  @Test
  void notChosen_keepsTheOrderItWasGiven() {
    BoxBackendHealth health =
        new BoxBackendHealth("bwrap", true, "ok", Map.of(), List.of(), candidates());

    assertThat(new ArrayList<>(health.notChosen().keySet()))
        .containsExactlyElementsOf(candidates().keySet());
  }

  @Test
  void notChosen_keepsItsOrderThroughJson() throws Exception {
    BoxBackendHealth health =
        new BoxBackendHealth("bwrap", true, "ok", Map.of(), List.of(), candidates());

    JsonNode written = MAPPER.valueToTree(health).get("not_chosen");
    BoxBackendHealth read =
        MAPPER.readValue(MAPPER.writeValueAsString(health), BoxBackendHealth.class);

    assertThat(written.fieldNames()).toIterable().containsExactlyElementsOf(candidates().keySet());
    assertThat(read.notChosen().keySet()).containsExactlyElementsOf(candidates().keySet());
  }

  @Test
  void notChosen_isAnUnmodifiableCopyWithoutNulls() {
    Map<String, String> given = candidates();
    BoxBackendHealth health = new BoxBackendHealth("bwrap", true, "ok", Map.of(), List.of(), given);
    given.clear();
    Map<String, String> withNull = new HashMap<>();
    withNull.put("docker", null);

    assertThat(health.notChosen()).hasSize(10);
    assertThatThrownBy(() -> health.notChosen().put("y", "z"))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(
            () -> new BoxBackendHealth("bwrap", true, "ok", Map.of(), List.of(), withNull))
        .isInstanceOf(NullPointerException.class);
  }
}
