package dev.box.langbot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

class SkillFrontMatterTest {

  @Test
  void parse_splitsMetadataFromInstructions() {
    SkillFrontMatter.Parsed parsed =
        SkillFrontMatter.parse(
            "---\nname: pdf-tools\ndisplay_name: PDF Tools\ndescription: Work with PDFs\n---\n\n"
                + "Use pdftotext.\n");
    assertThat(parsed.metadata())
        .containsExactlyInAnyOrderEntriesOf(
            Map.of(
                "name", "pdf-tools", "display_name", "PDF Tools", "description", "Work with PDFs"));
    assertThat(parsed.instructions()).isEqualTo("Use pdftotext.\n");
  }

  @Test
  void parse_withoutFrontMatter_orUnterminated_isAllInstructions() {
    assertThat(SkillFrontMatter.parse("# Title\nbody").metadata()).isEmpty();
    assertThat(SkillFrontMatter.parse("# Title\nbody").instructions()).isEqualTo("# Title\nbody");
    assertThat(SkillFrontMatter.parse("---\nname: x\nbody").instructions())
        .isEqualTo("---\nname: x\nbody");
    assertThat(SkillFrontMatter.parse("----\nname: x\n---\nbody").metadata()).isEmpty();
  }

  @Test
  void parse_readsQuotedFoldedAndBlockValues_andSkipsOtherKeys() {
    SkillFrontMatter.Parsed parsed =
        SkillFrontMatter.parse(
            "---\n"
                + "name: 'it''s'\n"
                + "tags:\n  - a\n  - b\n"
                + "description: a long description that a YAML writer\n  wrapped onto two lines\n"
                + "display_name: \"Caf\\u00e9 \\\"x\\\"\"\n"
                + "# a comment\n"
                + "---\nbody");
    assertThat(parsed.metadata().get("name")).isEqualTo("it's");
    assertThat(parsed.metadata().get("description"))
        .isEqualTo("a long description that a YAML writer wrapped onto two lines");
    assertThat(parsed.metadata().get("display_name")).isEqualTo("Café \"x\"");
    assertThat(parsed.metadata()).doesNotContainKey("tags");

    SkillFrontMatter.Parsed block =
        SkillFrontMatter.parse("---\ndescription: |\n  line one\n  line two\n---\nbody");
    assertThat(block.metadata().get("description")).isEqualTo("line one\nline two\n");
  }

  @Test
  void parse_readsWhatPyYamlWrites() {
    String wrapped = "x".repeat(100) + " " + "y".repeat(30) + " zz ".repeat(20);
    Map<String, String> dumped =
        Map.of(
            "description: 'a: b'",
            "a: b",
            "description: 'line1\n\n  line2'",
            "line1\nline2",
            "description: '" + "x".repeat(100) + "\n  " + wrapped.substring(101) + "'",
            wrapped,
            "description: 'café #1'",
            "café #1",
            "description: it's",
            "it's",
            "description: ' lead'",
            " lead",
            "description: 'true'",
            "true",
            "description: '- dash'",
            "- dash");
    dumped.forEach(
        (yaml, value) ->
            assertThat(SkillFrontMatter.parse("---\n" + yaml + "\n---\nbody").metadata())
                .containsEntry("description", value));
  }

  @Test
  void parse_refusesWhatItCannotRead() {
    assertThatThrownBy(() -> SkillFrontMatter.parse("---\n- a list\n---\nbody"))
        .hasMessageContaining("is not a 'key: value' line");
    assertThatThrownBy(() -> SkillFrontMatter.parse("---\nname: \"open\n---\nbody"))
        .hasMessageContaining("value of name is not readable");
    assertThatThrownBy(() -> SkillFrontMatter.parse("---\nname: a\nname: b\n---\nbody"))
        .hasMessageContaining("repeats the key name");
  }

  @Test
  void build_roundTripsThroughParse_andDropsBlankValues() {
    Map<String, @Nullable String> metadata = new HashMap<>();
    metadata.put("name", "demo");
    metadata.put("display_name", "Demo: \"quoted\" # not a comment\nsecond line");
    metadata.put("description", "  ");
    String text = SkillFrontMatter.build(metadata, "Do things.\n");
    assertThat(text).doesNotContain("description");
    SkillFrontMatter.Parsed parsed = SkillFrontMatter.parse(text);
    assertThat(parsed.metadata().get("name")).isEqualTo("demo");
    assertThat(parsed.metadata().get("display_name")).isEqualTo(metadata.get("display_name"));
    assertThat(parsed.instructions()).isEqualTo("Do things.\n");

    assertThat(SkillFrontMatter.build(Map.of(), "only body")).isEqualTo("only body");
  }
}
