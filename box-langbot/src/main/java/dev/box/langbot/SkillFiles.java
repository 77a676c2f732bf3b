package dev.box.langbot;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * The files inside one skill package: listed, read and written by paths relative to the package
 * root. A path must be relative, must not climb out with {@code ..}, and its real path (symlinks
 * followed) must stay inside the package's real root; files are opened without following a final
 * link; text is UTF-8 of at most {@value SkillPackages#MAX_TEXT_BYTES} bytes.
 */
final class SkillFiles {
  private static final int MAX_LIST_ENTRIES = 1_000;
  private static final int MAX_DIRECTORY_ENTRIES = 10_000;

  private SkillFiles() {}

  /** One entry of a listing; {@code size} is null for a directory. */
  record FileEntry(String path, String name, boolean isDir, @Nullable Long size) {}

  /** A directory listing: at most the requested number of entries, and whether more were left. */
  record Listing(String basePath, List<FileEntry> entries, boolean truncated) {}

  /** The entries of {@code path} in the package, sorted by name. */
  static Listing list(Skill skill, String path, boolean includeHidden, int maxEntries)
      throws IOException {
    if (maxEntries <= 0) {
      throw new SkillException("max_entries must be a positive integer");
    }
    int limit = Math.min(maxEntries, MAX_LIST_ENTRIES);
    Resolved target = resolve(skill, path);
    if (!Files.isDirectory(target.real())) {
      throw new SkillException("Skill directory not found: " + target.requested());
    }
    List<Path> children = new ArrayList<>();
    try (Stream<Path> listing = Files.list(target.real())) {
      for (Path child : (Iterable<Path>) listing::iterator) {
        if (children.size() >= MAX_DIRECTORY_ENTRIES) {
          throw new SkillException("Skill directory exceeds the configured entry limit");
        }
        children.add(child);
      }
    }
    children.sort(Comparator.comparing(p -> String.valueOf(p.getFileName())));
    List<Path> visible =
        children.stream()
            .filter(p -> includeHidden || !String.valueOf(p.getFileName()).startsWith("."))
            .toList();
    List<FileEntry> entries = new ArrayList<>();
    for (Path child : visible.subList(0, Math.min(limit, visible.size()))) {
      String name = String.valueOf(child.getFileName());
      String relative = target.relative().isEmpty() ? name : target.relative() + "/" + name;
      BasicFileAttributes attributes =
          Files.readAttributes(child, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
      boolean dir = attributes.isDirectory();
      entries.add(new FileEntry(relative, name, dir, dir ? null : attributes.size()));
    }
    return new Listing(
        target.relative().isEmpty() ? "." : target.relative(), entries, visible.size() > limit);
  }

  /** A text file's normalised relative path and content. */
  record Text(String path, String content) {}

  /** A text file of the package. */
  static Text read(Skill skill, String path) throws IOException {
    Resolved target = resolve(skill, path);
    if (!Files.isRegularFile(target.real())) {
      throw new SkillException("Skill file not found: " + target.shown());
    }
    String content = SkillPackages.readText(target.real(), "Skill file " + target.shown());
    return new Text(target.shown(), content);
  }

  /**
   * Writes a text file of the package, creating its directories.
   *
   * @return the normalised relative path and the bytes written
   */
  static Written write(Skill skill, String path, String content) throws IOException {
    Resolved target = resolve(skill, path);
    byte[] bytes = content.getBytes(StandardCharsets.UTF_8);
    if (bytes.length > SkillPackages.MAX_TEXT_BYTES) {
      throw new SkillException(
          "Skill file "
              + target.shown()
              + " exceeds the "
              + SkillPackages.MAX_TEXT_BYTES
              + "-byte limit");
    }
    if (target.real().equals(skill.packageRoot())) {
      throw new SkillException("Skill file not found: " + target.shown());
    }
    Path parent = Objects.requireNonNull(target.real().getParent());
    Files.createDirectories(parent);
    // The directories just made may have met a link planted meanwhile: check again.
    if (!SkillPackages.real(parent).startsWith(skill.packageRoot())) {
      throw outside();
    }
    writeNoFollow(target.real(), bytes);
    return new Written(target.shown(), bytes.length);
  }

  /** What a write did. */
  record Written(String path, int bytes) {}

  /** Replaces {@code file}'s content; a link at {@code file} is refused, not followed. */
  static void writeNoFollow(Path file, byte[] bytes) throws IOException {
    try (OutputStream out =
        Files.newOutputStream(
            file,
            LinkOption.NOFOLLOW_LINKS,
            StandardOpenOption.CREATE,
            StandardOpenOption.TRUNCATE_EXISTING,
            StandardOpenOption.WRITE)) {
      out.write(bytes);
    }
  }

  /**
   * A checked path of the package.
   *
   * @param real its real path
   * @param relative its normalised relative path with {@code /} separators, "" for the root
   * @param requested the path as the request gave it (for messages)
   */
  private record Resolved(Path real, String relative, String requested) {
    String shown() {
      return relative.isEmpty() ? "." : relative;
    }
  }

  private static Resolved resolve(Skill skill, String path) {
    String requested = path.strip().isEmpty() ? "." : path.strip();
    if (requested.indexOf('\0') >= 0) {
      throw outside();
    }
    Path relative = Path.of(requested);
    if (relative.isAbsolute()) {
      throw new SkillException("path must be relative to the skill package root");
    }
    Path normal = relative.normalize();
    if (normal.startsWith("..")) {
      throw outside();
    }
    Path root = skill.packageRoot();
    Path real = SkillPackages.real(root.resolve(normal));
    if (!real.startsWith(root)) {
      throw outside();
    }
    String shown = normal.toString().replace('\\', '/');
    return new Resolved(real, shown, requested);
  }

  private static SkillException outside() {
    return new SkillException("path must stay within the skill package root");
  }
}
