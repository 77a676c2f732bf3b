package dev.box.langbot;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** Where {@code box.local.skills_root} puts the skills, as LangBot's runtime resolves it. */
class SkillsRootTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Path CWD = Path.of("/srv/langbot");

  private static BoxInit.Local read(String local) throws IOException {
    return BoxInit.Local.read(JSON.readTree(local), CWD);
  }

  @Test
  void skillsRoot_isUnderTheHostRoot_unlessAbsolute() throws IOException {
    assertThat(read("{\"host_root\": \"./data/box\"}").skillsRoot())
        .isEqualTo(Path.of("/srv/langbot/data/box/skills"));
    assertThat(read("{\"host_root\": \"/var/box\", \"skills_root\": \"my-skills\"}").skillsRoot())
        .isEqualTo(Path.of("/var/box/my-skills"));
    assertThat(read("{\"host_root\": \"/var/box\", \"skills_root\": \"/opt/skills\"}").skillsRoot())
        .isEqualTo(Path.of("/opt/skills"));
    assertThat(read("{\"skills_root\": \"skills\"}").skillsRoot())
        .isEqualTo(Path.of("/srv/langbot/skills"));
  }

  @Test
  void skillsRoot_isLeftToBox_whenTheSectionNamesNoRoot() throws IOException {
    assertThat(read("{\"profile\": \"default\"}").skillsRoot()).isNull();
    assertThat(BoxInit.Local.NONE.skillsRoot()).isNull();
  }
}
