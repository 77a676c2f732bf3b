package dev.box.backend.microvm;

import com.fasterxml.jackson.databind.JsonNode;
import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.BoxValidationException;
import dev.box.api.internal.FileTrees;
import dev.box.sandbox.engine.EngineClient;
import dev.box.sandbox.engine.EnginePaths;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The root disks of sessions' images: an image the container engine has becomes an ext4 file of its
 * flat file system, cached by the image's id in {@code images/} beside the default root, and shared
 * read-only by every VM of that image (each VM's writable layer is the guest's tmpfs).
 *
 * <p>A root is made once per image id: the engine creates a container of the image without starting
 * it, exports its file system as a tar ({@link RootTar} unpacks it, hostile, into a private
 * directory), removes the container; {@link GuestRootCheck} checks the tree has what the guest's
 * init needs; {@code mkfs.ext4 -d} packs it into a file of a temporary name, renamed into place, so
 * a crash leaves no half root. Sessions of one image that ask at once wait for the one build. The
 * image's name reaches the engine only URL-encoded in an API path; mkfs's command line has only
 * paths this class made.
 */
final class ImageRoots {
  private static final Logger log = LoggerFactory.getLogger(ImageRoots.class);

  /** The most members an image's file system may have. */
  static final long MAX_ENTRIES = 2_000_000;

  private static final Duration CALL_TIMEOUT = Duration.ofSeconds(30);
  private static final Duration EXPORT_TIMEOUT = Duration.ofMinutes(20);
  private static final Duration MKFS_TIMEOUT = Duration.ofMinutes(20);

  /** A build left by a crashed server is removed once it is this old. */
  private static final Duration STALE_BUILD = Duration.ofDays(1);

  private static final Pattern IMAGE_ID = Pattern.compile("(sha256:)?([0-9a-f]{64})");
  private static final String BUILD_PREFIX = ".build-";

  private final EngineClient engine;
  private final Path socket;
  private final Path dir;
  private final Path mkfs;
  private final long maxBytes;
  private final SecureRandom random = new SecureRandom();
  private final Map<String, CompletableFuture<Path>> building = new ConcurrentHashMap<>();

  /**
   * @param engine the engine's API at {@code socket}
   * @param dir where the roots are kept: readable by the sandbox uid, as QEMU opens them
   * @param mkfs the {@code mkfs.ext4} binary
   * @param maxBytes what an image's exported file system may hold
   */
  ImageRoots(EngineClient engine, Path socket, Path dir, Path mkfs, long maxBytes) {
    this.engine = engine;
    this.socket = socket;
    this.dir = dir;
    this.mkfs = mkfs;
    this.maxBytes = maxBytes;
  }

  /**
   * The {@code mkfs.ext4} of the host's e2fsprogs.
   *
   * @throws IOException when there is none
   */
  static Path mkfs() throws IOException {
    for (Path candidate : List.of(Path.of("/usr/sbin/mkfs.ext4"), Path.of("/sbin/mkfs.ext4"))) {
      if (Files.isExecutable(candidate)) {
        return candidate;
      }
    }
    throw new IOException("no mkfs.ext4 in /usr/sbin or /sbin: install e2fsprogs");
  }

  /**
   * Checks that the engine answers and makes the directory of the roots, removing builds that a
   * crashed server left.
   *
   * @throws IOException saying why the roots cannot be made
   */
  void prepare() throws IOException {
    EngineClient.Response ping = engine.call("GET", "/_ping", null, Duration.ofSeconds(5));
    if (!ping.ok()) {
      throw EngineClient.engineError(ping.status(), ping.message());
    }
    Files.createDirectories(dir);
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
    Instant stale = Instant.now().minus(STALE_BUILD);
    try (Stream<Path> entries = Files.list(dir)) {
      for (Path entry : entries.toList()) {
        FileTime modified = Files.getLastModifiedTime(entry);
        if (entry.getFileName().toString().startsWith(BUILD_PREFIX)
            && modified.toInstant().isBefore(stale)) {
          FileTrees.deleteTreeQuietly(entry);
        }
      }
    }
  }

  /** The engine's socket, for the health report. */
  Path socket() {
    return socket;
  }

  /**
   * The root disk of {@code image}, made now when there is none for its id yet (which can take
   * minutes).
   *
   * @throws BoxValidationException when the engine has no such image, or the image cannot be a root
   *     (too large, a refused member, something the init needs missing)
   * @throws BoxException {@code backend_unavailable} when the engine fails
   * @throws IOException when the root cannot be written
   */
  Path rootOf(String image) throws IOException, InterruptedException {
    String hex = imageId(image);
    Path root = dir.resolve(hex + ".ext4");
    if (Files.isRegularFile(root)) {
      return root;
    }
    CompletableFuture<Path> mine = new CompletableFuture<>();
    CompletableFuture<Path> other = building.putIfAbsent(hex, mine);
    if (other != null) {
      return await(other, image);
    }
    try {
      Path built = Files.isRegularFile(root) ? root : build(image, hex, root);
      mine.complete(built);
      return built;
    } catch (IOException | RuntimeException e) {
      mine.completeExceptionally(e);
      throw e;
    } finally {
      building.remove(hex, mine);
    }
  }

  private static Path await(CompletableFuture<Path> other, String image)
      throws IOException, InterruptedException {
    try {
      return other.get(EXPORT_TIMEOUT.plus(MKFS_TIMEOUT).toSeconds(), TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause() == null ? e : e.getCause();
      if (cause instanceof BoxException box) {
        throw box;
      }
      throw new IOException(
          "the root of image " + image + " could not be made: " + cause.getMessage(), e);
    } catch (TimeoutException e) {
      throw new IOException("the root of image " + image + " is still being made", e);
    }
  }

  /** The hex digest of {@code image}'s id, as the engine has it. */
  private String imageId(String image) throws IOException {
    EngineClient.Response answer = call("GET", EnginePaths.inspectImage(image), null);
    if (answer.status() == 404) {
      throw new BoxValidationException(
          "image " + image + " is not present in the container engine at " + socket);
    }
    if (!answer.ok()) {
      throw unavailable("cannot inspect image " + image + ": " + answer.message(), null);
    }
    JsonNode json = answer.json();
    String architecture = json.path("Architecture").asText("");
    if (!architecture.isEmpty() && !architecture.equals("amd64")) {
      throw new BoxValidationException(
          "image " + image + " is built for " + architecture + "; the micro-VMs are amd64");
    }
    Matcher id = IMAGE_ID.matcher(json.path("Id").asText(""));
    if (!id.matches()) {
      throw unavailable(
          "the engine gave image " + image + " an id that is not a sha256 digest", null);
    }
    return id.group(2);
  }

  private Path build(String image, String hex, Path root) throws IOException, InterruptedException {
    log.info("making the micro-VM root of image {} (sha256:{})", image, hex);
    long started = System.nanoTime();
    Path work =
        Files.createTempDirectory(
            dir,
            BUILD_PREFIX,
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    try {
      Path tree = Files.createDirectory(work.resolve("tree"));
      RootTar.Summary summary = export(image, hex, tree);
      GuestRootCheck.check(tree, image);
      Files.setPosixFilePermissions(tree, PosixFilePermissions.fromString("rwxr-xr-x"));
      Path disk = work.resolve("root.ext4");
      mkfs(tree, disk, summary, work.resolve("mkfs.log"));
      Files.setPosixFilePermissions(disk, PosixFilePermissions.fromString("r--r--r--"));
      Files.move(disk, root, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      log.info(
          "made the micro-VM root of image {}: {} files, {} MiB, in {} ms",
          image,
          summary.entries(),
          Files.size(root) >> 20,
          (System.nanoTime() - started) / 1_000_000);
      return root;
    } finally {
      FileTrees.deleteTreeQuietly(work);
    }
  }

  /**
   * Unpacks the file system of a container of image {@code hex}, never started, into {@code tree}.
   */
  private RootTar.Summary export(String image, String hex, Path tree) throws IOException {
    String name = "box-export-" + HexFormat.of().formatHex(random.generateSeed(6));
    EngineClient.Response created =
        call(
            "POST",
            EnginePaths.createContainer(name),
            Map.of(
                "Image",
                "sha256:" + hex,
                "Cmd",
                List.of("/bin/sh"),
                "NetworkDisabled",
                true,
                "Labels",
                Map.of("dev.box.export", "microvm")));
    if (!created.ok()) {
      throw unavailable("cannot export image " + image + ": " + created.message(), null);
    }
    String container = created.json().path("Id").asText(name);
    try (InputStream tar =
        engine.download(EnginePaths.exportContainer(container), EXPORT_TIMEOUT)) {
      return RootTar.unpack(tar, tree, maxBytes, MAX_ENTRIES);
    } finally {
      remove(container);
    }
  }

  private void remove(String container) {
    try {
      EngineClient.Response removed = call("DELETE", EnginePaths.forceRemove(container), null);
      if (!removed.ok() && removed.status() != 404) {
        log.warn("cannot remove the export container {}: {}", container, removed.message());
      }
    } catch (IOException | BoxException e) {
      log.warn("cannot remove the export container {}: {}", container, e.getMessage());
    }
  }

  /**
   * Packs {@code tree} into the ext4 file {@code disk}: its size the tree's blocks and a quarter
   * more, with an inode for every member and some to spare.
   */
  private void mkfs(Path tree, Path disk, RootTar.Summary summary, Path output)
      throws IOException, InterruptedException {
    long inodes = summary.entries() + summary.entries() / 4 + 1024;
    long kib = (summary.blockBytes() + inodes * 256) / 1024 * 5 / 4 + 32 * 1024;
    Process mkfs =
        new ProcessBuilder(
                this.mkfs.toString(),
                "-q",
                "-t",
                "ext4",
                "-L",
                "box-image",
                "-m",
                "0",
                "-N",
                Long.toString(inodes),
                "-d",
                tree.toString(),
                disk.toString(),
                kib + "k")
            .redirectErrorStream(true)
            .redirectOutput(output.toFile())
            .start();
    if (!mkfs.waitFor(MKFS_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
      mkfs.destroyForcibly();
      throw new IOException("mkfs.ext4 did not finish within " + MKFS_TIMEOUT.toMinutes() + " min");
    }
    if (mkfs.exitValue() != 0) {
      throw new IOException("mkfs.ext4 failed (" + mkfs.exitValue() + "): " + Vm.tail(output));
    }
  }

  private EngineClient.Response call(String method, String path, @Nullable Object body)
      throws IOException {
    try {
      return engine.call(method, path, body, CALL_TIMEOUT);
    } catch (IOException e) {
      throw unavailable("the container engine at " + socket + " failed: " + e.getMessage(), e);
    }
  }

  private static BoxException unavailable(String message, @Nullable Exception cause) {
    return cause == null
        ? new BoxException(BoxErrorCode.BACKEND_UNAVAILABLE, message)
        : new BoxException(BoxErrorCode.BACKEND_UNAVAILABLE, message, cause);
  }
}
