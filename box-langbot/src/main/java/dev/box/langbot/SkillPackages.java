package dev.box.langbot;

import dev.box.core.policy.HostPathPolicy;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * Skill packages on disk, whoever owns them: finding them below a directory, reading one, the name
 * rule, bounded UTF-8 text, and deleting a tree. Symbolic links are never followed into: discovery
 * does not descend through them, entry files are opened without following them, and a delete
 * removes a link, not what it points at.
 */
final class SkillPackages {
  static final int MAX_TEXT_BYTES = 1024 * 1024;
  private static final int MAX_DISCOVERED = 1_000;
  private static final int MAX_SCAN_ENTRIES = 10_000;
  private static final int MAX_NAME = 64;
  private static final Pattern NAME = Pattern.compile("[\\p{IsAlphabetic}\\p{IsDigit}_-]+");
  private static final List<String> ENTRY_FILES = List.of("SKILL.md", "skill.md");
  private static final List<String> PYTHON_FILES =
      List.of("requirements.txt", "pyproject.toml", "setup.py", "setup.cfg");

  private SkillPackages() {}

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
      return strictUtf8(bytes);
    } catch (CharacterCodingException e) {
      throw new SkillException(subject + " is not valid UTF-8 text");
    }
  }

  /** {@code bytes} as UTF-8; malformed input is an error, not a replacement character. */
  static String strictUtf8(byte[] bytes) throws CharacterCodingException {
    return StandardCharsets.UTF_8
        .newDecoder()
        .onMalformedInput(CodingErrorAction.REPORT)
        .onUnmappableCharacter(CodingErrorAction.REPORT)
        .decode(ByteBuffer.wrap(bytes))
        .toString();
  }

  /**
   * {@link HostPathPolicy#resolve}: the real path, symlinks followed, of a path that may not exist.
   */
  static Path real(Path path) {
    return HostPathPolicy.resolve(path.toAbsolutePath());
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
}
