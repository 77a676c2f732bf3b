package dev.box.langbot;

import com.fasterxml.jackson.databind.JsonNode;
import dev.box.api.internal.FileTrees;
import dev.box.core.policy.HostPathPolicy;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The skill packages of one Workspace: directories under {@code <skills root>/tenants/<namespace>}
 * that hold a {@code SKILL.md} (or {@code skill.md}), created, read, changed and deleted as
 * LangBot's own Box runtime does.
 *
 * <p>Every host path is resolved (symlinks followed) and must stay inside the Workspace's root, so
 * one Workspace never reaches another's packages; symbolic links inside a package are never
 * followed by discovery or deletes. Failures are {@link SkillException}s with the reference's
 * messages. Not thread-safe: {@link SkillActions} runs one skill operation at a time.
 */
final class SkillStore {
  private static final long MAX_LIST_TEXT_BYTES = 16L * 1024 * 1024;

  private final Path skillsRoot;
  private final Path root;

  /**
   * The store of {@code namespace} under {@code skillsRoot}.
   *
   * @throws SkillException when {@code namespace} is not a single path element
   */
  SkillStore(Path skillsRoot, String namespace) {
    String ns = namespace.strip();
    if (ns.isEmpty()
        || ns.contains("/")
        || ns.contains("\\")
        || ns.equals(".")
        || ns.equals("..")) {
      throw new SkillException("Invalid Box skill namespace");
    }
    this.skillsRoot = HostPathPolicy.resolve(skillsRoot.toAbsolutePath());
    this.root = this.skillsRoot.resolve("tenants").resolve(ns);
  }

  /** The Workspace's root, created when missing. */
  Path root() throws IOException {
    Files.createDirectories(root);
    return SkillPackages.real(root);
  }

  /** Where ZIP uploads are unpacked: on the skills root's file system, outside every Workspace. */
  Path staging() throws IOException {
    Path staging = skillsRoot.resolve(".staging");
    Files.createDirectories(staging);
    return staging;
  }

  /**
   * The Workspace's skills, most recently changed first; packages that cannot be read are skipped.
   */
  List<Skill> list() throws IOException {
    List<Skill> skills = new ArrayList<>();
    long text = 0;
    for (SkillPackages.Entry entry : SkillPackages.discover(root(), 6)) {
      Skill skill;
      try {
        skill = SkillPackages.load(entry);
      } catch (IOException | RuntimeException e) {
        continue;
      }
      text += skill.instructions().length() + skill.description().length();
      if (text > MAX_LIST_TEXT_BYTES) {
        throw new SkillException("Skill listing exceeds the configured text limit");
      }
      skills.add(skill);
    }
    skills.sort(Comparator.comparing(Skill::updated).reversed());
    return skills;
  }

  /** The skill named {@code name}, or null. */
  @Nullable Skill get(String name) throws IOException {
    for (Skill skill : list()) {
      if (skill.name().equals(name)) {
        return skill;
      }
    }
    return null;
  }

  /** The skill named {@code name}; throws the reference's not-found message otherwise. */
  Skill require(String name) throws IOException {
    Skill skill = get(name);
    if (skill == null) {
      throw new SkillException("Skill \"" + name + "\" not found");
    }
    return skill;
  }

  /**
   * Creates a skill from {@code data}: a new package under the root, or, with {@code package_root},
   * a package of this Workspace adopted in place or copied.
   */
  Skill create(JsonNode data) throws IOException {
    String name = SkillPackages.validateName(text(data, "name"));
    if (get(name) != null) {
      throw new SkillException("Skill with name \"" + name + "\" already exists");
    }
    Path root = root();
    Path managed = root.resolve(name);
    String requested = text(data, "package_root").strip();
    Path target = managed;
    Skill imported = null;
    if (!requested.isEmpty()) {
      Path source = scoped(requested, "package_root");
      if (!Files.isDirectory(source, LinkOption.NOFOLLOW_LINKS)) {
        throw new SkillException("Directory does not exist: " + source);
      }
      if (source.equals(root)) {
        throw new SkillException("package_root must be a directory below the Workspace skill root");
      }
      target = source;
      imported = readPackage(source);
    } else {
      Files.createDirectories(managed);
    }
    Map<String, @Nullable String> metadata = new HashMap<>();
    metadata.put("name", name);
    metadata.put("display_name", createField(data, "display_name", imported));
    metadata.put("description", createField(data, "description", imported));
    String instructions = createField(data, "instructions", imported);
    writeEntry(
        target, imported == null ? "SKILL.md" : imported.entryFile(), metadata, instructions);
    Skill created = get(name);
    if (created == null) {
      throw new SkillException("Failed to create skill \"" + name + "\"");
    }
    return created;
  }

  /** Changes a skill's display name, description or instructions; its name and package stay. */
  Skill update(String name, JsonNode data) throws IOException {
    Skill skill = require(name);
    String requestedName = text(data, "name").strip();
    if (!requestedName.isEmpty() && !requestedName.equals(skill.name())) {
      throw new SkillException("Renaming skills is not supported");
    }
    String requestedRoot = text(data, "package_root").strip();
    if (!requestedRoot.isEmpty()
        && !SkillPackages.real(Path.of(requestedRoot)).equals(skill.packageRoot())) {
      throw new SkillException(
          "Updating package_root is not supported; recreate the skill to import a different"
              + " package");
    }
    Map<String, @Nullable String> metadata = new HashMap<>();
    metadata.put("name", skill.name());
    metadata.put("display_name", updateField(data, "display_name", skill.displayName()));
    metadata.put("description", updateField(data, "description", skill.description()));
    String instructions = updateField(data, "instructions", skill.instructions());
    writeEntry(
        skill.packageRoot(), skill.entryFile(), metadata, instructions == null ? "" : instructions);
    Skill updated = get(name);
    if (updated == null) {
      throw new SkillException("Skill \"" + name + "\" not found after update");
    }
    return updated;
  }

  /** Deletes the top-level directory under the root that holds the skill's package. */
  void delete(String name) throws IOException {
    Skill skill = require(name);
    Path install = installRoot(skill.packageRoot());
    if (install == null) {
      throw new SkillException("Only managed skills under the Box skills root can be deleted");
    }
    FileTrees.deleteTree(install);
  }

  /** The one skill package at or up to two levels below {@code path}, which must be this root's. */
  Skill scan(String path) throws IOException {
    Path dir = scoped(path, "scan path");
    if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
      throw new SkillException("Directory does not exist: " + path);
    }
    List<SkillPackages.Entry> found = SkillPackages.discover(dir, 2);
    if (found.isEmpty()) {
      throw new SkillException(
          "No SKILL.md found in " + path + " or its subdirectories (max depth: 2)");
    }
    if (found.size() > 1) {
      throw new SkillException(
          "Multiple skill directories found in "
              + path
              + ". Please choose a more specific path: "
              + String.join(", ", found.stream().map(e -> e.dir().toString()).toList()));
    }
    return SkillPackages.load(found.get(0));
  }

  /**
   * The real path of {@code path}, which must lie in this Workspace's root.
   *
   * @throws SkillException {@code "<label> must stay within the Workspace skill root"}
   */
  Path scoped(String path, String label) throws IOException {
    Path root = root();
    Path candidate;
    try {
      candidate =
          path.isBlank() ? null : SkillPackages.real(Path.of(path.strip()).toAbsolutePath());
    } catch (RuntimeException e) {
      candidate = null;
    }
    if (candidate == null || !candidate.startsWith(root)) {
      throw new SkillException(label + " must stay within the Workspace skill root");
    }
    return candidate;
  }

  /** The top-level directory under the root that holds {@code packageRoot}, or null. */
  @Nullable Path installRoot(Path packageRoot) throws IOException {
    Path root = root();
    Path real = SkillPackages.real(packageRoot);
    if (real.equals(root) || !real.startsWith(root)) {
      return null;
    }
    return root.resolve(root.relativize(real).getName(0));
  }

  private static Skill readPackage(Path dir) throws IOException {
    String entry = SkillPackages.entryFile(dir);
    if (entry == null) {
      throw new SkillException("No SKILL.md found in " + dir);
    }
    return SkillPackages.load(new SkillPackages.Entry(dir, entry));
  }

  private static void writeEntry(
      Path dir, String entryFile, Map<String, @Nullable String> metadata, String instructions)
      throws IOException {
    Files.createDirectories(dir);
    byte[] bytes = SkillFrontMatter.build(metadata, instructions).getBytes(StandardCharsets.UTF_8);
    if (bytes.length > SkillPackages.MAX_TEXT_BYTES) {
      throw new SkillException(
          "Skill entry file "
              + entryFile
              + " exceeds the "
              + SkillPackages.MAX_TEXT_BYTES
              + "-byte limit");
    }
    SkillFiles.writeNoFollow(dir.resolve(entryFile), bytes);
  }

  /** A string key, "" when missing or null; other JSON values as their text. */
  static String text(JsonNode data, String key) {
    JsonNode value = data.get(key);
    if (value == null || value.isNull()) {
      return "";
    }
    return value.isTextual() ? value.asText() : value.toString();
  }

  private static String createField(JsonNode data, String key, @Nullable Skill imported) {
    JsonNode value = data.get(key);
    String fromPackage = imported == null ? "" : importedField(imported, key);
    if (value == null || value.isNull()) {
      return fromPackage;
    }
    String given = text(data, key);
    return imported != null && given.isBlank() ? fromPackage : given;
  }

  private static String importedField(Skill skill, String key) {
    return switch (key) {
      case "display_name" -> skill.displayName();
      case "description" -> skill.description();
      default -> skill.instructions();
    };
  }

  /**
   * The new value of {@code key}: the request's when it has the key (null clears), else the old.
   */
  private static @Nullable String updateField(JsonNode data, String key, String current) {
    if (!data.has(key)) {
      return current;
    }
    JsonNode value = data.get(key);
    return value == null || value.isNull() ? null : text(data, key);
  }
}
