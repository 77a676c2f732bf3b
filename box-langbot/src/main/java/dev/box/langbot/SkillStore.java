package dev.box.langbot;

import com.fasterxml.jackson.databind.JsonNode;
import dev.box.core.policy.HostPathPolicy;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * The skill packages of one Workspace: directories under {@code <skills root>/tenants/<namespace>}
 * that hold a {@code SKILL.md} (or {@code skill.md}), created, read, changed and deleted as
 * LangBot's own Box runtime does.
 *
 * <p>Every host path is resolved (symlinks followed) and must stay inside the Workspace's root, so
 * one Workspace never reaches another's packages; symbolic links inside a package are never
 * followed by discovery, copies or deletes. Failures are {@link SkillException}s with the
 * reference's messages. Not thread-safe: {@link SkillActions} runs one skill operation at a time.
 */
final class SkillStore {
  static final int MAX_TEXT_BYTES = 1024 * 1024;
  private static final int MAX_DISCOVERED = 1_000;
  private static final int MAX_SCAN_ENTRIES = 10_000;
  private static final long MAX_LIST_TEXT_BYTES = 16L * 1024 * 1024;
  private static final int MAX_NAME = 64;
  private static final Pattern NAME = Pattern.compile("[\\p{IsAlphabetic}\\p{IsDigit}_-]+");
  private static final List<String> ENTRY_FILES = List.of("SKILL.md", "skill.md");
  private static final List<String> PYTHON_FILES =
      List.of("requirements.txt", "pyproject.toml", "setup.py", "setup.cfg");

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
    return real(root);
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
    for (Entry entry : discover(root(), 6)) {
      Skill skill;
      try {
        skill = load(entry);
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
    String name = validateName(text(data, "name"));
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
    if (!requestedRoot.isEmpty() && !real(Path.of(requestedRoot)).equals(skill.packageRoot())) {
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
    deleteTree(install);
  }

  /** The one skill package at or up to two levels below {@code path}, which must be this root's. */
  Skill scan(String path) throws IOException {
    Path dir = scoped(path, "scan path");
    if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
      throw new SkillException("Directory does not exist: " + path);
    }
    List<Entry> found = discover(dir, 2);
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
    return load(found.get(0));
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
      candidate = path.isBlank() ? null : real(Path.of(path.strip()).toAbsolutePath());
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
    Path real = real(packageRoot);
    if (real.equals(root) || !real.startsWith(root)) {
      return null;
    }
    return root.resolve(root.relativize(real).getName(0));
  }

  /** A package directory and its entry file. */
  record Entry(Path dir, String file) {}

  /**
   * The skill packages at most {@code maxDepth} directories below {@code start}, breadth first; a
   * package's own subdirectories and symbolic links are not searched.
   */
  static List<Entry> discover(Path start, int maxDepth) throws IOException {
    List<Entry> found = new ArrayList<>();
    Deque<Map.Entry<Path, Integer>> queue = new ArrayDeque<>();
    queue.add(Map.entry(start, 0));
    Set<Path> seen = new HashSet<>();
    int scanned = 0;
    while (!queue.isEmpty()) {
      Map.Entry<Path, Integer> next = queue.removeFirst();
      Path dir = next.getKey();
      if (!seen.add(dir)) {
        continue;
      }
      String entry = entryFile(dir);
      if (entry != null) {
        found.add(new Entry(dir, entry));
        if (found.size() > MAX_DISCOVERED) {
          throw new SkillException("Skill discovery exceeded the configured package limit");
        }
        continue;
      }
      if (next.getValue() >= maxDepth) {
        continue;
      }
      List<Path> children = new ArrayList<>();
      try (Stream<Path> listing = Files.list(dir)) {
        for (Path child : (Iterable<Path>) listing::iterator) {
          if (++scanned > MAX_SCAN_ENTRIES) {
            throw new SkillException("Skill discovery exceeded the configured entry limit");
          }
          children.add(child);
        }
      } catch (IOException e) {
        continue;
      }
      children.sort(Comparator.comparing(p -> String.valueOf(p.getFileName())));
      for (Path child : children) {
        if (Files.isDirectory(child, LinkOption.NOFOLLOW_LINKS)) {
          queue.add(Map.entry(child, next.getValue() + 1));
        }
      }
    }
    return found;
  }

  /** The entry file of {@code dir} when it is a regular file (not a link), or null. */
  static @Nullable String entryFile(Path dir) {
    for (String name : ENTRY_FILES) {
      if (Files.isRegularFile(dir.resolve(name), LinkOption.NOFOLLOW_LINKS)) {
        return name;
      }
    }
    return null;
  }

  /** Reads the package at {@code entry}. */
  static Skill load(Entry entry) throws IOException {
    Path dir = real(entry.dir());
    Path file = dir.resolve(entry.file());
    String content = readText(file, "Skill entry file " + entry.file());
    SkillFrontMatter.Parsed parsed = SkillFrontMatter.parse(content);
    String declared = parsed.metadata().get("name");
    String name = validateName(declared != null ? declared : String.valueOf(dir.getFileName()));
    String display = parsed.metadata().get("display_name");
    String description = parsed.metadata().get("description");
    boolean python =
        PYTHON_FILES.stream().anyMatch(f -> Files.isRegularFile(dir.resolve(f)))
            || Files.isDirectory(dir.resolve(".venv"));
    BasicFileAttributes attributes =
        Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
    return new Skill(
        name,
        display == null || display.isBlank() ? name : display.strip(),
        description == null ? "" : description.strip(),
        parsed.instructions(),
        dir,
        entry.file(),
        python,
        changeTime(file, attributes),
        attributes.lastModifiedTime().toInstant(),
        null);
  }

  /**
   * The name rule of LangBot's skill store.
   *
   * @return {@code name} stripped
   */
  static String validateName(String name) {
    String stripped = name.strip();
    if (stripped.isEmpty()) {
      throw new SkillException("Skill name is required");
    }
    if (!NAME.matcher(stripped).matches()) {
      throw new SkillException(
          "Skill name can only contain letters, numbers, hyphens and underscores");
    }
    if (stripped.length() > MAX_NAME) {
      throw new SkillException("Skill name cannot exceed 64 characters");
    }
    return stripped;
  }

  /**
   * A UTF-8 text file of at most {@value #MAX_TEXT_BYTES} bytes, read without following a link.
   *
   * @param subject how messages name the file
   */
  static String readText(Path file, String subject) throws IOException {
    byte[] bytes;
    try (InputStream in = Files.newInputStream(file, LinkOption.NOFOLLOW_LINKS)) {
      bytes = in.readNBytes(MAX_TEXT_BYTES + 1);
    }
    if (bytes.length > MAX_TEXT_BYTES) {
      throw new SkillException(subject + " exceeds the " + MAX_TEXT_BYTES + "-byte limit");
    }
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(bytes))
          .toString();
    } catch (CharacterCodingException e) {
      throw new SkillException(subject + " is not valid UTF-8 text");
    }
  }

  /** Deletes {@code dir} and everything below it; links are deleted, never followed. */
  static void deleteTree(Path dir) throws IOException {
    if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    Files.walkFileTree(
        dir,
        new SimpleFileVisitor<>() {
          @Override
          public FileVisitResult visitFile(Path file, BasicFileAttributes attrs)
              throws IOException {
            Files.delete(file);
            return FileVisitResult.CONTINUE;
          }

          @Override
          public FileVisitResult postVisitDirectory(Path d, @Nullable IOException e)
              throws IOException {
            Files.delete(d);
            return FileVisitResult.CONTINUE;
          }
        });
  }

  /**
   * {@link HostPathPolicy#resolve}: the real path, symlinks followed, of a path that may not exist.
   */
  static Path real(Path path) {
    return HostPathPolicy.resolve(path.toAbsolutePath());
  }

  private static Skill readPackage(Path dir) throws IOException {
    String entry = entryFile(dir);
    if (entry == null) {
      throw new SkillException("No SKILL.md found in " + dir);
    }
    return load(new Entry(dir, entry));
  }

  private static void writeEntry(
      Path dir, String entryFile, Map<String, @Nullable String> metadata, String instructions)
      throws IOException {
    Files.createDirectories(dir);
    byte[] bytes = SkillFrontMatter.build(metadata, instructions).getBytes(StandardCharsets.UTF_8);
    if (bytes.length > MAX_TEXT_BYTES) {
      throw new SkillException(
          "Skill entry file " + entryFile + " exceeds the " + MAX_TEXT_BYTES + "-byte limit");
    }
    SkillFiles.writeNoFollow(dir.resolve(entryFile), bytes);
  }

  private static Instant changeTime(Path file, BasicFileAttributes attributes) {
    try {
      if (Files.getAttribute(file, "unix:ctime", LinkOption.NOFOLLOW_LINKS) instanceof FileTime t) {
        return t.toInstant();
      }
    } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
      // Not a Unix file system: the creation time is the nearest there is.
    }
    return attributes.creationTime().toInstant();
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
