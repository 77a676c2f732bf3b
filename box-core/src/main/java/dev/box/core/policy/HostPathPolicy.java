package dev.box.core.policy;

import dev.box.api.BoxValidationException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Decides which host directories a sandbox may mount.
 *
 * <p>Every path is resolved with symlinks followed before it is checked, so a link inside an
 * allowed root that points outside it is judged by its target. Refused are: the reference runtime's
 * blocked list ({@code /etc}, {@code /proc}, {@code /sys}, {@code /dev}, {@code /root}, {@code
 * /boot}, {@code /run}, {@code /var/run} and the engine sockets) and everything below them; {@code
 * /} itself; the runtime's data directory, what is below it and what contains it; and, when allowed
 * roots are configured, anything outside them.
 */
public final class HostPathPolicy {
  private static final List<Path> BLOCKED =
      List.of(
              "/etc",
              "/proc",
              "/sys",
              "/dev",
              "/root",
              "/boot",
              "/run",
              "/var/run",
              "/run/docker.sock",
              "/var/run/docker.sock",
              "/run/podman/podman.sock",
              "/var/run/podman/podman.sock")
          .stream()
          .map(Path::of)
          .toList();

  private final Path dataDir;
  private final List<Path> allowedRoots;
  private final List<Path> managedRoots;
  private final boolean rootsRequired;

  /**
   * Creates the policy.
   *
   * @param dataDir the runtime's data directory (created already)
   * @param allowedRoots the allowed mount roots; empty allows every path that is not blocked
   */
  public HostPathPolicy(Path dataDir, List<Path> allowedRoots) {
    this(dataDir, allowedRoots, List.of(), false);
  }

  private HostPathPolicy(
      Path dataDir, List<Path> allowedRoots, List<Path> managedRoots, boolean rootsRequired) {
    this.dataDir = realOrAbsolute(dataDir);
    this.allowedRoots = allowedRoots.stream().map(HostPathPolicy::realOrAbsolute).toList();
    this.managedRoots = managedRoots.stream().map(HostPathPolicy::realOrAbsolute).toList();
    this.rootsRequired = rootsRequired;
  }

  /**
   * A policy as LangBot's {@code box.local.allowed_mount_roots} configures it: only paths under
   * {@code allowedRoots}, and no host path at all when there is none.
   */
  public static HostPathPolicy restrictedTo(Path dataDir, List<Path> allowedRoots) {
    return restrictedTo(dataDir, allowedRoots, List.of());
  }

  /**
   * As {@link #restrictedTo(Path, List)}, with roots the runtime manages: a directory inside one
   * (LangBot's default workspace, whose tenant directories LangBot creates as whatever user it runs
   * as) is the runtime's, and is handed to the sandbox user when it is mounted read-write.
   */
  public static HostPathPolicy restrictedTo(
      Path dataDir, List<Path> allowedRoots, List<Path> managedRoots) {
    return new HostPathPolicy(dataDir, allowedRoots, managedRoots, true);
  }

  /** The allowed mount roots, resolved; empty means every path that is not blocked. */
  public List<Path> allowedRoots() {
    return allowedRoots;
  }

  /**
   * Resolves {@code hostPath} and checks it; a missing directory is created when {@code create} is
   * true and the path is allowed.
   *
   * @return the real path of the directory
   * @throws BoxValidationException when the path is blocked, outside the allowed roots, or not a
   *     directory
   */
  public Path check(String hostPath, boolean create) {
    return checkDirectory(hostPath, create).path();
  }

  /**
   * A host directory that passed the policy.
   *
   * @param path its real path
   * @param boxOwned whether it is the runtime's to hand to the sandbox user: the policy created it
   *     just now (it then belongs to no user's data yet), or it lies in a managed root
   */
  public record HostDirectory(Path path, boolean boxOwned) {}

  /**
   * As {@link #check}, and tells whether the directory was created.
   *
   * @throws BoxValidationException as {@link #check}
   */
  public HostDirectory checkDirectory(String hostPath, boolean create) {
    boolean created = false;
    Path requested;
    try {
      requested = Path.of(hostPath);
    } catch (InvalidPathException e) {
      throw new BoxValidationException(
          "host_path " + hostPath + " is not a valid path on this host");
    }
    if (!requested.isAbsolute()) {
      throw new BoxValidationException("host_path " + hostPath + " is not a path on this host");
    }
    Path resolved = resolve(requested);
    checkResolved(hostPath, resolved);
    if (!Files.exists(resolved)) {
      if (!create) {
        throw new BoxValidationException(
            "host_path must point to an existing directory on the host: " + hostPath);
      }
      try {
        Files.createDirectories(resolved);
        created = true;
      } catch (IOException e) {
        throw new BoxValidationException("host_path " + hostPath + " cannot be created: " + e);
      }
      // Re-resolve: a link may have been planted while the directories were created.
      resolved = resolve(requested);
      checkResolved(hostPath, resolved);
    }
    if (!Files.isDirectory(resolved, LinkOption.NOFOLLOW_LINKS)) {
      throw new BoxValidationException("host_path must point to a directory: " + hostPath);
    }
    Path real = resolved;
    boolean managed = managedRoots.stream().anyMatch(real::startsWith);
    return new HostDirectory(resolved, created || managed);
  }

  private void checkResolved(String original, Path resolved) {
    if (resolved.getNameCount() == 0) {
      throw blocked(original);
    }
    for (Path b : BLOCKED) {
      if (resolved.startsWith(b)) {
        throw blocked(original);
      }
    }
    if (resolved.startsWith(dataDir) || dataDir.startsWith(resolved)) {
      throw blocked(original);
    }
    if (allowedRoots.isEmpty() && rootsRequired) {
      throw new BoxValidationException(
          "host_path mounting is disabled because no allowed_mount_roots are configured");
    }
    if (!allowedRoots.isEmpty() && allowedRoots.stream().noneMatch(resolved::startsWith)) {
      throw new BoxValidationException(
          "host_path is outside allowed_mount_roots: "
              + allowedRoots.stream().map(Path::toString).collect(Collectors.joining(", ")));
    }
  }

  private static BoxValidationException blocked(String original) {
    return new BoxValidationException("host_path " + original + " is blocked for security");
  }

  /**
   * The real path of {@code path}: symlinks followed, {@code ..} applied. For a path that does not
   * exist yet, the real path of its deepest existing ancestor joined with the rest.
   */
  public static Path resolve(Path path) {
    Path normal = path.normalize();
    Path existing = normal;
    Path rest = Path.of("");
    while (existing != null && !Files.exists(existing)) {
      Path name = existing.getFileName();
      rest = name == null ? rest : name.resolve(rest);
      existing = existing.getParent();
    }
    if (existing == null) {
      return normal;
    }
    try {
      return existing.toRealPath().resolve(rest).normalize();
    } catch (IOException e) {
      throw new BoxValidationException("host_path " + path + " cannot be resolved: " + e);
    }
  }

  private static Path realOrAbsolute(Path path) {
    Path absolute = path.toAbsolutePath().normalize();
    return resolve(absolute);
  }
}
