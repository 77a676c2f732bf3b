package dev.box.server.ports;

import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * Issues and checks preview links: capability tokens ({@link PreviewToken}) that open one port of
 * one session without the control token, until they expire or are revoked.
 *
 * <p>The HMAC key is 32 random bytes kept in the server's state directory ({@value #KEY_FILE}, mode
 * 0600), so links survive a restart. A revocation ({@code DELETE .../links}) refuses every link of
 * that port issued before it; it is kept in {@value #REVOKED_FILE} as long as a link it refuses
 * could still be valid ({@link #MAX_TTL}). A link issued before its session was created (the
 * session was deleted, and one of the same id made since) is refused too, so deleting a session
 * revokes its links, however it ends.
 */
public final class PreviewLinks {
  /** The longest a link may live. */
  public static final Duration MAX_TTL = Duration.ofDays(7);

  /** How long a link lives when the request names no {@code ttl_sec}. */
  public static final Duration DEFAULT_TTL = Duration.ofHours(1);

  /** The path under which links are served: {@code /preview/<token>/...}. */
  public static final String PREFIX = "/preview/";

  private static final String KEY_FILE = "preview-key";
  private static final String REVOKED_FILE = "preview-revoked";
  private static final int KEY_BYTES = 32;

  private final byte[] key;
  private final Clock clock;
  private final @Nullable Path revokedFile;
  private final @Nullable URI publicUrl;
  private final SecureRandom random = new SecureRandom();
  private final ConcurrentHashMap<String, Instant> revoked = new ConcurrentHashMap<>();

  private PreviewLinks(
      byte[] key, Clock clock, @Nullable Path revokedFile, @Nullable URI publicUrl) {
    this.key = key.clone();
    this.clock = clock;
    this.revokedFile = revokedFile;
    this.publicUrl = publicUrl;
  }

  /**
   * The links of a server whose state directory is {@code stateDir}: its key, made there on first
   * use, and its revocations.
   *
   * @param publicUrl where clients reach this server ({@code public_url}), or null: where each
   *     request to issue a link was sent
   * @throws UncheckedIOException when the key cannot be read or written
   */
  public static PreviewLinks open(Path stateDir, Clock clock, @Nullable URI publicUrl) {
    try {
      PreviewLinks links =
          new PreviewLinks(
              key(stateDir.resolve(KEY_FILE)), clock, stateDir.resolve(REVOKED_FILE), publicUrl);
      links.load();
      return links;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot use the preview link key in " + stateDir, e);
    }
  }

  /** Links that live as long as this object: a fresh key, revocations in memory. */
  public static PreviewLinks ephemeral(Clock clock) {
    byte[] key = new byte[KEY_BYTES];
    new SecureRandom().nextBytes(key);
    return new PreviewLinks(key, clock, null, null);
  }

  /**
   * The URL of {@code link}: {@code <base>/preview/<token>/}, where the base is {@code public_url}
   * when set, else {@code requestBase} (the scheme and authority the issuing request was sent to).
   */
  public String url(Link link, String requestBase) {
    String base = publicUrl == null ? requestBase : publicUrl.toString();
    return (base.endsWith("/") ? base.substring(0, base.length() - 1) : base)
        + PREFIX
        + link.token()
        + "/";
  }

  /** A link's token and when it expires. */
  public record Link(String token, Instant expiresAt) {}

  /** The port a valid link opens. */
  public record Target(String sessionId, int port) {}

  /**
   * Issues a link to {@code port} of session {@code sessionId} that lives {@code ttl}.
   *
   * @throws dev.box.api.BoxValidationException when {@code ttl} is not 1 s to {@link #MAX_TTL}
   */
  public Link issue(String sessionId, int port, Duration ttl) {
    Instant now = clock.instant();
    Instant lastRevoked = revoked.get(revocationKey(sessionId, port));
    // A link issued in the millisecond of a revocation would count as revoked.
    Instant issued =
        lastRevoked != null && !now.isAfter(lastRevoked) ? lastRevoked.plusMillis(1) : now;
    Instant expires = issued.plus(ttl);
    PreviewToken token =
        new PreviewToken(
            sessionId,
            port,
            Instant.ofEpochMilli(issued.toEpochMilli()),
            Instant.ofEpochMilli(expires.toEpochMilli()));
    return new Link(token.encode(key, random), token.expiresAt());
  }

  /**
   * The port {@code token} opens.
   *
   * @param createdAt when the session it names was created; throws when that session is gone
   * @throws BoxException ({@code not_found}) when the token is forged, malformed, expired, revoked
   *     or older than its session
   */
  public Target check(String token, Function<String, Instant> createdAt) {
    PreviewToken link = PreviewToken.decode(token, key);
    if (link == null) {
      throw refused("no such preview link");
    }
    if (!clock.instant().isBefore(link.expiresAt())) {
      throw refused("the preview link expired at " + link.expiresAt());
    }
    Instant revokedAt = revoked.get(revocationKey(link.sessionId(), link.port()));
    if (revokedAt != null && !link.issuedAt().isAfter(revokedAt)) {
      throw refused("the preview link was revoked");
    }
    Instant created;
    try {
      created = createdAt.apply(link.sessionId());
    } catch (BoxException e) {
      throw refused("the session of the preview link is gone");
    }
    if (link.issuedAt().isBefore(created.truncatedTo(ChronoUnit.MILLIS))) {
      throw refused("the session of the preview link is gone");
    }
    return new Target(link.sessionId(), link.port());
  }

  /** Revokes every link to {@code port} of session {@code sessionId} issued so far. */
  public void revoke(String sessionId, int port) {
    revoked.put(revocationKey(sessionId, port), clock.instant());
    save();
  }

  private static BoxException refused(String message) {
    return new BoxException(BoxErrorCode.NOT_FOUND, message);
  }

  private static String revocationKey(String sessionId, int port) {
    return port + " " + URLEncoder.encode(sessionId, StandardCharsets.UTF_8);
  }

  /** Reads the revocations that may still refuse a link. */
  private void load() throws IOException {
    Path file = revokedFile;
    if (file == null || !Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
      String[] fields = line.split(" ", 3);
      if (fields.length == 3) {
        try {
          revoked.put(fields[1] + " " + fields[2], Instant.ofEpochMilli(Long.parseLong(fields[0])));
        } catch (NumberFormatException e) {
          // A line this version did not write: skipped.
        }
      }
    }
  }

  /** Writes the revocations that may still refuse a link, dropping those older than any link. */
  private synchronized void save() {
    Instant oldest = clock.instant().minus(MAX_TTL);
    revoked.values().removeIf(at -> at.isBefore(oldest));
    Path file = revokedFile;
    if (file == null) {
      return;
    }
    List<String> lines = new ArrayList<>();
    revoked.forEach((k, at) -> lines.add(at.toEpochMilli() + " " + k));
    try {
      Path temporary = file.resolveSibling(file.getFileName() + ".new");
      Files.write(temporary, lines, StandardCharsets.UTF_8);
      Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw new BoxException(
          BoxErrorCode.INTERNAL_ERROR, "cannot record the revocation in " + file + ": " + e, e);
    }
  }

  /** The key in {@code file}, made first when there is none. */
  private static byte[] key(Path file) throws IOException {
    if (Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
      if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
        throw new IOException(file + " is not a regular file");
      }
      byte[] key = Files.readAllBytes(file);
      if (key.length != KEY_BYTES) {
        throw new IOException(file + " does not hold a " + KEY_BYTES + "-byte key: delete it");
      }
      return key;
    }
    byte[] key = new byte[KEY_BYTES];
    new SecureRandom().nextBytes(key);
    Path temporary = file.resolveSibling(file.getFileName() + ".new");
    Files.deleteIfExists(temporary);
    Files.write(
        Files.createFile(
            temporary,
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"))),
        key,
        StandardOpenOption.TRUNCATE_EXISTING);
    Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE);
    return key;
  }
}
