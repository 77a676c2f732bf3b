package dev.box.langbot;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import org.jspecify.annotations.Nullable;

/**
 * One skill package as LangBot sees it: the public fields of LangBot's skill store, read from the
 * package's entry file.
 *
 * @param packageRoot the package directory's real path
 * @param entryFile {@code SKILL.md} or {@code skill.md}
 * @param pythonProject whether the package has a Python project file or a {@code .venv}
 * @param created the entry file's status change time
 * @param updated the entry file's modification time
 * @param sourcePath for a ZIP preview, the package's directory inside the archive ({@code ""} for
 *     its root); null otherwise
 */
record Skill(
    String name,
    String displayName,
    String description,
    String instructions,
    Path packageRoot,
    String entryFile,
    boolean pythonProject,
    Instant created,
    Instant updated,
    @Nullable String sourcePath) {

  private static final DateTimeFormatter SECONDS =
      DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss").withZone(ZoneOffset.UTC);

  /** This skill as a ZIP preview: found at {@code source} in the archive, to go to {@code root}. */
  Skill asPreview(String source, Path root) {
    return new Skill(
        name,
        displayName,
        description,
        instructions,
        root,
        entryFile,
        pythonProject,
        created,
        updated,
        source);
  }

  /** The skill in LangBot's shape; times as Python's {@code isoformat()} writes them in UTC. */
  ObjectNode toJson(ObjectMapper mapper) {
    ObjectNode node = mapper.createObjectNode();
    node.put("name", name);
    node.put("display_name", displayName);
    node.put("description", description);
    node.put("instructions", instructions);
    node.put("package_root", packageRoot.toString());
    node.put("entry_file", entryFile);
    node.put("python_project", pythonProject);
    node.put("created_at", iso(created));
    node.put("updated_at", iso(updated));
    if (sourcePath != null) {
      node.put("source_path", sourcePath);
    }
    return node;
  }

  static String iso(Instant time) {
    int micros = time.getNano() / 1000;
    return SECONDS.format(time) + (micros == 0 ? "" : String.format(".%06d", micros)) + "+00:00";
  }
}
