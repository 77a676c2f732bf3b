package dev.box.agenthost;

import dev.box.api.internal.FileTrees;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * How an MCP server's host project reaches its sandbox, as the reference stages it: the project
 * directory is inferred from the command line, copied under the workspace, and host paths on the
 * command line are rewritten to the copy.
 */
public final class McpStaging {
  /** Names a refresh keeps in the staged copy: environments and caches built inside the sandbox. */
  public static final Set<String> PRESERVED =
      Set.of(".venv", "venv", "env", ".cache", ".tmp", ".box");

  /** Names never copied. */
  public static final Set<String> IGNORED =
      Set.of(".git", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache");

  private static final Set<String> VENV_DIRS = Set.of(".venv", "venv", "env", ".env");
  private static final Set<String> VENV_BINS = Set.of("bin", "Scripts");
  private static final List<String> PYTHON_MANIFESTS =
      List.of("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt");

  private McpStaging() {}

  /**
   * The host project of a command line: the directories of its absolute paths that exist (a file's
   * parent, a directory itself), each with a virtualenv's {@code bin} unwrapped to the project,
   * reduced to their common ancestor; null when there is none or it is the root.
   */
  public static @Nullable Path inferHostPath(String command, List<String> args) {
    Path common = null;
    List<String> words = new ArrayList<>(args);
    words.addFirst(command);
    for (String word : words) {
      if (!word.startsWith("/")) {
        continue;
      }
      Path path = Path.of(word).normalize();
      if (!Files.exists(path)) {
        continue;
      }
      Path dir = Files.isDirectory(path) ? path : path.getParent();
      if (dir == null) {
        continue;
      }
      dir = unwrapVenv(dir);
      common = common == null ? dir : commonAncestor(common, dir);
    }
    return common == null || common.getParent() == null ? null : common;
  }

  /** {@code <root>/{.venv|venv|env|.env}/{bin|Scripts}} becomes {@code <root>}. */
  public static Path unwrapVenv(Path dir) {
    Path venv = dir.getParent();
    if (venv == null || venv.getParent() == null) {
      return dir;
    }
    boolean isBin = VENV_BINS.contains(String.valueOf(dir.getFileName()));
    boolean isVenv = VENV_DIRS.contains(String.valueOf(venv.getFileName()));
    return isBin && isVenv ? venv.getParent() : dir;
  }

  private static Path commonAncestor(Path a, Path b) {
    Path p = a;
    while (p != null && !b.startsWith(p)) {
      p = p.getParent();
    }
    return p == null ? a.getRoot() : p;
  }

  /**
   * {@code word} with a host path under {@code hostPath} rewritten to the same path under {@code
   * stagedDir}; other words unchanged.
   */
  public static String rewrite(String word, Path hostPath, String stagedDir) {
    if (!word.startsWith("/")) {
      return word;
    }
    Path path = Path.of(word).normalize();
    if (!path.startsWith(hostPath)) {
      return word;
    }
    Path rel = hostPath.relativize(path);
    return rel.toString().isEmpty() ? stagedDir : stagedDir + "/" + rel;
  }

  /** Whether {@code command} is a host virtualenv's Python interpreter under {@code hostPath}. */
  public static boolean isVenvPython(String command, Path hostPath) {
    Path path = Path.of(command).normalize();
    Path bin = path.getParent();
    Path name = path.getFileName();
    return path.startsWith(hostPath)
        && bin != null
        && name != null
        && name.toString().startsWith("python")
        && !unwrapVenv(bin).equals(bin);
  }

  /**
   * Copies {@code source} into {@code target}, refreshing a previous copy in place: what the source
   * no longer has is deleted, except the {@link #PRESERVED} names at the top; {@link #IGNORED}
   * names are skipped; symlinks are copied as links.
   */
  public static void copyTree(Path source, Path target) {
    try {
      Files.createDirectories(target);
      try (Stream<Path> old = Files.list(target)) {
        for (Path entry : old.toList()) {
          if (!PRESERVED.contains(entry.getFileName().toString())) {
            FileTrees.deleteTree(entry);
          }
        }
      }
      Files.walkFileTree(
          source,
          new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs)
                throws IOException {
              String name = String.valueOf(dir.getFileName());
              if (!dir.equals(source) && skipped(dir, name)) {
                return FileVisitResult.SKIP_SUBTREE;
              }
              Files.createDirectories(target.resolve(source.relativize(dir).toString()));
              return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs)
                throws IOException {
              if (!skipped(file, String.valueOf(file.getFileName()))) {
                Files.copy(
                    file,
                    target.resolve(source.relativize(file).toString()),
                    StandardCopyOption.REPLACE_EXISTING,
                    StandardCopyOption.COPY_ATTRIBUTES,
                    LinkOption.NOFOLLOW_LINKS);
              }
              return FileVisitResult.CONTINUE;
            }

            private boolean skipped(Path path, String name) {
              boolean top = source.equals(path.getParent());
              return IGNORED.contains(name) || (top && PRESERVED.contains(name));
            }
          });
    } catch (IOException e) {
      throw new UncheckedIOException("cannot stage " + source + " into " + target, e);
    }
  }

  /**
   * The SHA-256 of a staged Python project's manifests, or null when it is no Python project (no
   * {@code pyproject.toml}, {@code setup.py}, {@code setup.cfg} or {@code requirements.txt}).
   */
  public static @Nullable String pythonManifestDigest(Path project) {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      boolean any = false;
      for (String name : PYTHON_MANIFESTS) {
        Path file = project.resolve(name);
        if (Files.isRegularFile(file)) {
          any = true;
          sha.update(name.getBytes(StandardCharsets.UTF_8));
          sha.update(Files.readAllBytes(file));
        }
      }
      return any ? HexFormat.of().formatHex(sha.digest()) : null;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Whether a staged Python project installs from {@code requirements.txt}. */
  static boolean hasRequirements(Path project) {
    return Files.isRegularFile(project.resolve("requirements.txt"));
  }
}
