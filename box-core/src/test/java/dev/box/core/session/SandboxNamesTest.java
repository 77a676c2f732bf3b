package dev.box.core.session;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The names a session's sandbox, cgroup and workspace get on the host. */
class SandboxNamesTest {
  private static final String SHAPE = "inst_[a-z0-9_.-]{1,32}-[0-9a-f]{8}";

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          abc                 | abc
          My Session          | my-session
          user/42:chat#7      | user-42-chat-7
          a.b_c-d             | a.b_c-d
          ---lead-and-trail---| lead-and-trail
          ..hidden            | hidden
          """)
  void name_startsWithTheInstanceAndAReadableFormOfTheId(String sessionId, String readable) {
    String name = SandboxNames.of("inst", sessionId);

    assertThat(name).matches("inst_" + java.util.regex.Pattern.quote(readable) + "-[0-9a-f]{8}");
  }

  @Test
  void readablePart_isCappedAt32Characters() {
    String name = SandboxNames.of("inst", "a".repeat(100));

    assertThat(name).matches("inst_a{32}-[0-9a-f]{8}");
  }

  @Test
  void idsSharingThe32CharacterPrefix_getDifferentNames() {
    String prefix = "p".repeat(32);

    assertThat(SandboxNames.of("inst", prefix + "-one"))
        .isNotEqualTo(SandboxNames.of("inst", prefix + "-two"))
        .startsWith("inst_" + prefix + "-");
  }

  @Test
  void idsThatNormaliseAlike_getDifferentNames() {
    List<String> ids = List.of("a/b", "a b", "a:b", "A-B", "a-b", "a//b", "a / b", "-a-b-");
    Set<String> names = new HashSet<>();

    for (String id : ids) {
      String name = SandboxNames.of("inst", id);
      assertThat(name).startsWith("inst_a-b-");
      names.add(name);
    }

    assertThat(names).hasSameSizeAs(ids);
  }

  @Test
  void sameId_alwaysGetsTheSameName() {
    assertThat(SandboxNames.of("inst", "Chat 7")).isEqualTo(SandboxNames.of("inst", "Chat 7"));
  }

  @Test
  void sameId_inAnotherInstance_getsAnotherName() {
    assertThat(SandboxNames.of("one", "s")).isNotEqualTo(SandboxNames.of("two", "s"));
  }

  @ParameterizedTest
  @ValueSource(strings = {"/", "///", "...", "-", "..", "日本語", "😀", " ", "\t", "-.-"})
  void idWithNothingReadable_fallsBackToSession(String sessionId) {
    assertThat(SandboxNames.of("inst", sessionId)).matches("inst_session-[0-9a-f]{8}");
  }

  @Test
  void fallbackNames_ofDifferentIds_differ() {
    assertThat(SandboxNames.of("inst", "日本語")).isNotEqualTo(SandboxNames.of("inst", "中文"));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "../../etc/passwd",
        "a\u0000b",
        "name with spaces and UPPER",
        "ÄÖÜ-straße",
        "$(rm -rf /)",
        "`id`;ls|cat>x<y&z",
        "\n\r\t",
        "x/../../y",
        "."
      })
  void name_isSafeForFilesAndCgroups(String sessionId) {
    String name = SandboxNames.of("inst", sessionId);

    assertThat(name).matches(SHAPE).doesNotContain("/");
  }

  @Test
  void longHostileId_isSafeAndBounded() {
    String name = SandboxNames.of("inst", "/../".repeat(500) + "x".repeat(500));

    assertThat(name).matches(SHAPE);
    assertThat(name.length()).isLessThanOrEqualTo("inst_".length() + 32 + 9);
  }
}
