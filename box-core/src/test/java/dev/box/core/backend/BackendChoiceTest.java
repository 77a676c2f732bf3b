package dev.box.core.backend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A choice keeps the candidates selection passed over in the order it considered them. */
class BackendChoiceTest {

  /** Ten candidates in an order no hash would give by chance. */
  private static Map<String, String> candidates() {
    Map<String, String> notChosen = new LinkedHashMap<>();
    for (String name : List.of("k", "docker", "b", "podman", "z", "local", "a", "x", "m", "c")) {
      notChosen.put(name, "why not " + name);
    }
    return notChosen;
  }

  @Test
  void notChosen_keepsTheOrderItWasGiven() {
    BackendChoice choice =
        new BackendChoice(new NoBackend("no backend in this test"), "local", "first", candidates());

    assertThat(choice.notChosen().keySet()).containsExactlyElementsOf(candidates().keySet());
  }

  @Test
  void notChosen_isAnUnmodifiableCopyWithoutNulls() {
    Map<String, String> given = candidates();
    BackendChoice choice =
        new BackendChoice(new NoBackend("no backend in this test"), "local", "first", given);
    given.clear();
    Map<String, String> withNull = new HashMap<>();
    withNull.put("docker", null);

    assertThat(choice.notChosen()).hasSize(10);
    assertThatThrownBy(() -> choice.notChosen().put("y", "z"))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(
            () ->
                new BackendChoice(
                    new NoBackend("no backend in this test"), "local", "first", withNull))
        .isInstanceOf(NullPointerException.class);
  }
}
