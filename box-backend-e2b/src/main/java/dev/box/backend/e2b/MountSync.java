package dev.box.backend.e2b;

import dev.box.api.internal.ShellScript;
import dev.box.core.backend.SandboxMount;
import dev.box.remote.Printable;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Copies a session's host directories into its E2B sandbox before a process starts, and the
 * read-write ones back after it ends: a remote VM cannot mount the host. Files unchanged since the
 * last copy (same size and modification time on the host) are not sent again. What the sandbox
 * sends back is hostile input: its listing and every file are bounded, every path is checked to
 * stay inside its mount, and no host symlink is followed. Deletions are not propagated either way.
 */
final class MountSync {
  private static final Logger log = LoggerFactory.getLogger(MountSync.class);

  /** Directories never copied either way, as LangBot's runtime skips them. */
  static final Set<String> SKIPPED = Set.of(".git", "__pycache__", ".venv", "node_modules");

  static final int MAX_FILES = 4096;
  static final int MAX_FILE_BYTES = 16 << 20;
  static final long MAX_TOTAL_BYTES = 128L << 20;
  private static final int MAX_PATH_CHARS = 4096;

  /**
   * Creates every mount point: {@code $__BOX_N} of them, in {@code $__BOX_P_i} with mode {@code
   * $__BOX_M_i}, the read-write ones owned by {@code $__BOX_OWNER}.
   */
  private static final String PREPARE = ShellScript.load(MountSync.class, "prepare-mounts.sh");

  /** Lists the regular files under {@code $__BOX_DIR}: size, space, relative path, NUL. */
  private static final String LIST = ShellScript.load(MountSync.class, "list-files.sh");

  /** Creates the sync of one sandbox. */
  interface Factory {
    MountSync create(E2bSandbox sandbox);
  }

  private final E2bSandbox sandbox;
  private final Envd envd;
  private final List<SandboxMount> mounts;
  private final int hostUid;

  /** For each host file copied, its size and modification time when it was. */
  private final Map<Path, String> copied = new HashMap<>();

  MountSync(E2bSandbox sandbox, Envd envd, List<SandboxMount> mounts, int hostUid) {
    this.sandbox = sandbox;
    this.envd = envd;
    this.mounts = List.copyOf(mounts);
    this.hostUid = hostUid;
  }

  /** Creates the mount points as root: read-write ones owned by the sandbox user. */
  void prepare() throws IOException {
    if (mounts.isEmpty()) {
      return;
    }
    Map<String, String> env = new LinkedHashMap<>();
    env.put("PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
    env.put("__BOX_OWNER", Envd.USER);
    env.put("__BOX_N", Integer.toString(mounts.size()));
    for (int i = 0; i < mounts.size(); i++) {
      env.put("__BOX_P_" + i, mounts.get(i).sandboxPath());
      env.put("__BOX_M_" + i, mounts.get(i).readOnly() ? "ro" : "rw");
    }
    E2bSandbox.Helper result = sandbox.helper(Envd.ROOT, PREPARE, env);
    if (result.exitCode() != 0) {
      throw new IOException(
          "cannot create the mount points (exit "
              + result.exitCode()
              + "): "
              + Printable.excerpt(result.output()));
    }
  }

  /**
   * Copies every mount's changed files up; read-only ones as root, so the user cannot change them.
   */
  synchronized void upload() throws IOException {
    long[] budget = {MAX_TOTAL_BYTES, MAX_FILES};
    for (SandboxMount mount : mounts) {
      Path root = mount.hostPath();
      String user = mount.readOnly() ? Envd.ROOT : Envd.USER;
      Files.walkFileTree(
          root,
          new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
              return !dir.equals(root) && SKIPPED.contains(dir.getFileName().toString())
                  ? FileVisitResult.SKIP_SUBTREE
                  : FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs)
                throws IOException {
              if (!attrs.isRegularFile()) {
                return FileVisitResult.CONTINUE;
              }
              String stamp = attrs.size() + "@" + attrs.lastModifiedTime().toMillis();
              if (stamp.equals(copied.get(file))) {
                return FileVisitResult.CONTINUE;
              }
              if (attrs.size() > MAX_FILE_BYTES || attrs.size() > budget[0] || budget[1] <= 0) {
                log.warn(
                    "not copied into E2B sandbox {} (over the limits): {}", sandbox.id(), file);
                return FileVisitResult.CONTINUE;
              }
              byte[] content = Files.readAllBytes(file);
              budget[0] -= content.length;
              budget[1]--;
              envd.upload(user, sandboxPath(mount, root.relativize(file)), content);
              copied.put(file, stamp);
              return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException e) {
              return FileVisitResult.CONTINUE;
            }
          });
    }
  }

  /** Copies the read-write mounts' files back to the host, within the limits. */
  synchronized void download() throws IOException {
    long budget = MAX_TOTAL_BYTES;
    for (SandboxMount mount : mounts) {
      if (mount.readOnly()) {
        continue;
      }
      E2bSandbox.Helper listing =
          sandbox.helper(
              Envd.USER, LIST, Map.of("__BOX_DIR", mount.sandboxPath(), "PATH", "/usr/bin:/bin"));
      if (listing.exitCode() != 0) {
        throw new IOException("cannot list " + mount.sandboxPath() + " in the sandbox");
      }
      String[] entries = new String(listing.output(), StandardCharsets.UTF_8).split("\0");
      int files = 0;
      for (String entry : entries) {
        if (entry.isEmpty()) {
          continue;
        }
        if (++files > MAX_FILES) {
          log.warn(
              "E2B sandbox {} holds more than {} files in {}",
              sandbox.id(),
              MAX_FILES,
              mount.sandboxPath());
          break;
        }
        int space = entry.indexOf(' ');
        long size;
        try {
          size = Long.parseLong(entry.substring(0, Math.max(space, 0)));
        } catch (NumberFormatException e) {
          throw new IOException("a malformed listing from the sandbox");
        }
        String relative = entry.substring(space + 1);
        if (size > MAX_FILE_BYTES || size > budget || !safeRelative(relative)) {
          log.warn(
              "not copied back from E2B sandbox {}: {}",
              sandbox.id(),
              Printable.excerpt(relative.getBytes(StandardCharsets.UTF_8)));
          continue;
        }
        Path target = mount.hostPath().resolve(relative).normalize();
        if (!target.startsWith(mount.hostPath())
            || !parentsAreDirectories(mount.hostPath(), target)) {
          continue;
        }
        byte[] content = envd.download(mount.sandboxPath() + "/" + relative, MAX_FILE_BYTES);
        if (content == null) {
          continue;
        }
        budget -= content.length;
        write(target, content);
      }
    }
  }

  /** Whether {@code relative} names a file strictly inside its mount and no skipped directory. */
  private static boolean safeRelative(String relative) {
    if (relative.isEmpty() || relative.length() > MAX_PATH_CHARS || relative.startsWith("/")) {
      return false;
    }
    for (String part : relative.split("/", -1)) {
      if (part.isEmpty() || part.equals(".") || part.equals("..") || SKIPPED.contains(part)) {
        return false;
      }
    }
    return true;
  }

  /**
   * Creates the directories between {@code root} and {@code target}'s parent, refusing any that is
   * a symlink or not a directory: nothing the sandbox names may lead outside {@code root}.
   */
  private static boolean parentsAreDirectories(Path root, Path target) throws IOException {
    Path dir = root;
    for (Path part : root.relativize(target.getParent() == null ? root : target.getParent())) {
      if (part.toString().isEmpty()) {
        continue;
      }
      dir = dir.resolve(part);
      if (Files.isSymbolicLink(dir)) {
        return false;
      }
      if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
        Files.createDirectory(dir);
      } else if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
        return false;
      }
    }
    return !Files.isSymbolicLink(target)
        && (!Files.exists(target, LinkOption.NOFOLLOW_LINKS)
            || Files.isRegularFile(target, LinkOption.NOFOLLOW_LINKS));
  }

  /** Writes {@code content} unless the host file holds it already, then records it as copied. */
  private void write(Path target, byte[] content) throws IOException {
    boolean existed = Files.exists(target, LinkOption.NOFOLLOW_LINKS);
    if (existed
        && Files.size(target) == content.length
        && Arrays.equals(Files.readAllBytes(target), content)) {
      return;
    }
    try (OutputStream out =
        Files.newOutputStream(
            target,
            StandardOpenOption.CREATE,
            StandardOpenOption.WRITE,
            StandardOpenOption.TRUNCATE_EXISTING,
            LinkOption.NOFOLLOW_LINKS)) {
      out.write(content);
    }
    if (!existed) {
      try {
        Files.setAttribute(target, "unix:uid", hostUid, LinkOption.NOFOLLOW_LINKS);
        Files.setAttribute(target, "unix:gid", hostUid, LinkOption.NOFOLLOW_LINKS);
      } catch (IOException | UnsupportedOperationException e) {
        // Not root: the file stays the server's.
      }
    }
    BasicFileAttributes attrs = Files.readAttributes(target, BasicFileAttributes.class);
    copied.put(target, attrs.size() + "@" + attrs.lastModifiedTime().toMillis());
  }

  private static String sandboxPath(SandboxMount mount, Path relative) {
    List<String> parts = new ArrayList<>();
    relative.forEach(p -> parts.add(p.toString()));
    return mount.sandboxPath() + "/" + String.join("/", parts);
  }
}
