package dev.box.langbot;

import dev.box.api.internal.FileTrees;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Skill ZIP uploads: previewed (which packages an archive holds and where each would go) and
 * installed. The archive is unpacked into a fresh directory on the skills root's file system but
 * outside every Workspace, and each chosen package is renamed into place from there, so a refused
 * archive leaves nothing behind and no Workspace ever sees half an upload.
 */
final class SkillUploads {
  private SkillUploads() {}

  /**
   * Where in an archive its packages are looked for and what their directories are named, as both
   * upload actions take it.
   *
   * @param filename the archive's file name, whose stem names the packages' directories
   * @param sourceSubdir the directory of the archive the packages are looked for in; empty for its
   *     root
   * @param suffix appended to each package's directory name; empty for none
   */
  record Layout(String filename, String sourceSubdir, String suffix) {}

  /** Where the packages of {@code zip} would be installed, with their place in the archive. */
  static List<Skill> preview(SkillStore store, byte[] zip, Layout layout) throws IOException {
    Path staging = unpackDir(store, zip);
    try {
      Path root = subdir(archiveRoot(staging), layout.sourceSubdir());
      return candidates(store, root, layout);
    } finally {
      FileTrees.deleteTree(staging);
    }
  }

  /**
   * Installs the packages of {@code zip} chosen by {@code sourcePaths} and {@code sourcePath} (the
   * only one when the archive holds one and none is chosen).
   */
  static List<Skill> install(
      SkillStore store, byte[] zip, Layout layout, List<String> sourcePaths, String sourcePath)
      throws IOException {
    Path staging = unpackDir(store, zip);
    try {
      Path root = subdir(archiveRoot(staging), layout.sourceSubdir());
      List<Skill> chosen = select(candidates(store, root, layout), sourcePaths, sourcePath);
      Set<Path> targets = new LinkedHashSet<>();
      for (Skill preview : chosen) {
        Path target = preview.packageRoot();
        if (!targets.add(target)) {
          throw new SkillException("Duplicate target directory selected: " + target);
        }
        if (Files.exists(target, LinkOption.NOFOLLOW_LINKS)) {
          throw new SkillException("Skill directory already exists: " + target);
        }
        if (store.get(preview.name()) != null) {
          throw new SkillException("Skill with name \"" + preview.name() + "\" already exists");
        }
      }
      List<Path> moved = new ArrayList<>();
      List<Skill> installed = new ArrayList<>();
      try {
        for (Skill preview : chosen) {
          String inArchive = Objects.requireNonNullElse(preview.sourcePath(), "");
          Path source = inArchive.isEmpty() ? root : root.resolve(inArchive);
          Files.move(source, preview.packageRoot(), StandardCopyOption.ATOMIC_MOVE);
          moved.add(preview.packageRoot());
          installed.add(store.scan(preview.packageRoot().toString()));
        }
      } catch (IOException | RuntimeException e) {
        for (Path target : moved) {
          FileTrees.deleteTree(target);
        }
        throw e;
      }
      return installed;
    } finally {
      FileTrees.deleteTree(staging);
    }
  }

  /** The directory name an upload named {@code filename} starts from. */
  static String targetStem(String filename) {
    String base = filename.strip();
    base = base.substring(Math.max(base.lastIndexOf('/'), base.lastIndexOf('\\')) + 1);
    int dot = base.lastIndexOf('.');
    if (dot > 0) {
      base = base.substring(0, dot);
    }
    String safe = safeName(base);
    return safe.isEmpty() ? "uploaded-skill" : safe;
  }

  private static Path unpackDir(SkillStore store, byte[] zip) throws IOException {
    if (zip.length == 0) {
      throw new SkillException("Uploaded file is empty");
    }
    if (zip.length > SkillZip.MAX_COMPRESSED_BYTES) {
      throw new SkillException(
          "Uploaded archive exceeds the compressed size limit ("
              + SkillZip.MAX_COMPRESSED_BYTES
              + " bytes)");
    }
    Path staging = Files.createTempDirectory(store.staging(), "upload-");
    try {
      Path extracted = staging.resolve("extracted");
      Files.createDirectory(extracted);
      SkillZip.extract(zip, extracted);
      return staging;
    } catch (IOException | RuntimeException e) {
      FileTrees.deleteTree(staging);
      throw e;
    }
  }

  /** The archive's only top-level directory, or its root when it has several entries there. */
  private static Path archiveRoot(Path staging) throws IOException {
    Path extracted = staging.resolve("extracted");
    List<Path> top;
    try (Stream<Path> listing = Files.list(extracted)) {
      top = listing.limit(2).toList();
    }
    if (top.size() == 1 && Files.isDirectory(top.get(0), LinkOption.NOFOLLOW_LINKS)) {
      return top.get(0);
    }
    return extracted;
  }

  private static Path subdir(Path root, String sourceSubdir) {
    String normalized = EdgeTrim.trim(sourceSubdir.strip().replace('\\', '/'), "/");
    if (normalized.isEmpty()) {
      return root;
    }
    Path relative = Path.of(normalized).normalize();
    if (relative.isAbsolute() || relative.startsWith("..")) {
      throw new SkillException("source_subdir must stay within the uploaded archive");
    }
    Path target = SkillPackages.real(root.resolve(relative));
    if (!target.startsWith(SkillPackages.real(root))) {
      throw new SkillException("source_subdir must stay within the uploaded archive");
    }
    if (!Files.isDirectory(target, LinkOption.NOFOLLOW_LINKS)) {
      throw new SkillException(
          "source_subdir does not exist in the uploaded archive: " + normalized);
    }
    return target;
  }

  private static List<Skill> candidates(SkillStore store, Path root, Layout layout)
      throws IOException {
    List<SkillPackages.Entry> found = SkillPackages.discover(root, 2);
    if (found.isEmpty()) {
      // The reference names its temporary directory here; the host path says nothing to LangBot.
      throw new SkillException(
          "No SKILL.md found in the uploaded archive or its subdirectories (max depth: 2)");
    }
    String stem = targetStem(layout.filename());
    Path installRoot = store.root();
    List<Skill> previews = new ArrayList<>();
    for (SkillPackages.Entry entry : found) {
      Skill skill = SkillPackages.load(entry);
      String source = root.relativize(entry.dir()).toString().replace('\\', '/');
      String leaf = source.isEmpty() ? "" : source.substring(source.lastIndexOf('/') + 1);
      String target = leaf.isEmpty() || leaf.equals(stem) ? stem : stem + "-" + leaf;
      String safeSuffix = safeName(layout.suffix());
      if (!safeSuffix.isEmpty()) {
        target = target + "-" + safeSuffix;
      }
      previews.add(skill.asPreview(source, installRoot.resolve(safeName(target))));
    }
    previews.sort(Comparator.comparing(s -> String.valueOf(s.sourcePath())));
    return previews;
  }

  private static List<Skill> select(List<Skill> previews, List<String> sourcePaths, String legacy) {
    Set<String> wanted = new LinkedHashSet<>();
    for (String path : sourcePaths) {
      wanted.add(EdgeTrim.trim(path.strip().replace('\\', '/'), "/"));
    }
    String single = EdgeTrim.trim(legacy.strip().replace('\\', '/'), "/");
    if (!single.isEmpty()) {
      wanted.add(single);
    }
    if (previews.size() == 1 && wanted.isEmpty()) {
      return previews;
    }
    String available =
        String.join(
            ", ",
            previews.stream()
                .map(p -> String.valueOf(p.sourcePath()))
                .map(p -> p.isEmpty() ? "." : p)
                .toList());
    if (wanted.isEmpty()) {
      throw new SkillException(
          "Multiple skills found. Please choose one or more source_paths: " + available);
    }
    List<Skill> chosen = new ArrayList<>();
    for (String path : wanted) {
      Skill match =
          previews.stream().filter(p -> path.equals(p.sourcePath())).findFirst().orElse(null);
      if (match == null) {
        throw new SkillException("Invalid source_path \"" + path + "\". Available: " + available);
      }
      chosen.add(match);
    }
    return chosen;
  }

  /** Letters, digits, {@code -} and {@code _} kept, anything else a {@code -}; ends trimmed. */
  private static String safeName(String raw) {
    StringBuilder safe = new StringBuilder();
    raw.codePoints()
        .forEach(
            c ->
                safe.appendCodePoint(
                    Character.isLetterOrDigit(c) || c == '-' || c == '_' ? c : '-'));
    return EdgeTrim.trim(safe, "-_");
  }
}
