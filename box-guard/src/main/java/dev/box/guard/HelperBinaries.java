package dev.box.guard;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * The static C programs this module ships in its jar, one per supported arch ({@code
 * <name>-x86_64}, {@code <name>-aarch64}), and their installation into a data directory.
 */
final class HelperBinaries {
  private static final Set<PosixFilePermission> EXECUTABLE =
      PosixFilePermissions.fromString("rwxr-xr-x");

  private HelperBinaries() {}

  /** The resource name of {@code name} for this JVM's arch, or null when it is not supported. */
  static @Nullable String resourceName(String name) {
    String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
    return switch (arch) {
      case "amd64", "x86_64" -> name + "-x86_64";
      case "aarch64", "arm64" -> name + "-aarch64";
      default -> null;
    };
  }

  /** The bytes of {@code name} for this arch, or null when this build has none. */
  static byte @Nullable [] bytes(String name) throws IOException {
    String resource = resourceName(name);
    if (resource == null) {
      return null;
    }
    try (InputStream in = HelperBinaries.class.getResourceAsStream(resource)) {
      return in == null ? null : in.readAllBytes();
    }
  }

  /** Whether {@code path} holds {@code name} for this arch, executable, as the jar has it. */
  static boolean intact(Path path, String name) {
    try {
      byte[] expected = bytes(name);
      return expected != null && matches(path, expected);
    } catch (IOException e) {
      return false;
    }
  }

  /**
   * The installation of {@code name} in {@code dataDir}'s {@code bin}, from {@code cache} while the
   * file is intact (or the cached one is unavailable), else made again by {@code extract}.
   */
  static <T> T installCached(
      ConcurrentHashMap<Path, T> cache,
      Path dataDir,
      String name,
      Predicate<T> available,
      Function<Path, T> extract) {
    Path target = dataDir.toAbsolutePath().normalize().resolve("bin").resolve(name);
    return cache.compute(
        target,
        (path, previous) ->
            previous != null && (!available.test(previous) || intact(path, name))
                ? previous
                : extract.apply(path));
  }

  /**
   * Writes {@code bytes} to {@code target} (mode 0755, through a temporary file renamed into
   * place), unless an identical file is there.
   */
  static void install(Path target, byte[] bytes) throws IOException {
    if (matches(target, bytes)) {
      return;
    }
    Path dir = target.getParent();
    Files.createDirectories(dir);
    Path temp = Files.createTempFile(dir, "." + target.getFileName() + "-", ".tmp");
    try {
      Files.write(temp, bytes);
      Files.setPosixFilePermissions(temp, EXECUTABLE);
      Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } finally {
      Files.deleteIfExists(temp);
    }
  }

  private static boolean matches(Path path, byte[] expected) throws IOException {
    return Files.isRegularFile(path, LinkOption.NOFOLLOW_LINKS)
        && Files.getPosixFilePermissions(path, LinkOption.NOFOLLOW_LINKS).equals(EXECUTABLE)
        && Files.size(path) == expected.length
        && Arrays.equals(Files.readAllBytes(path), expected);
  }
}
