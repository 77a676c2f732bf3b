package dev.box.backend.docker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.box.guard.SyscallGuard;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The seccomp profile the engine applies to containers, under Box's own filter: the engine's
 * default, or a JSON profile file the operator names ({@code seccomp_profile}).
 *
 * <p>Docker takes the profile's content in {@code SecurityOpt} ({@code seccomp=<json>}), as its CLI
 * sends it; Podman's compatible API (4.x) takes a path there instead, and fails on content, so
 * Podman is given the file's path, which its service reads on this host.
 */
final class EngineProfile {
  private static final Logger log = LoggerFactory.getLogger(EngineProfile.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  private final @Nullable Path file;
  private final @Nullable String content;
  private final @Nullable String error;

  private EngineProfile(@Nullable Path file, @Nullable String content, @Nullable String error) {
    this.file = file;
    this.content = content;
    this.error = error;
  }

  /** The engine's default when {@code file} is null; else the file, read and checked now. */
  static EngineProfile read(@Nullable Path file) {
    if (file == null) {
      return new EngineProfile(null, null, null);
    }
    try {
      String text = Files.readString(file);
      String problem = problem(JSON.readTree(text));
      if (problem != null) {
        return new EngineProfile(file, null, "seccomp_profile " + file + " " + problem);
      }
      return new EngineProfile(file, JSON.writeValueAsString(JSON.readTree(text)), null);
    } catch (IOException e) {
      return new EngineProfile(
          file, null, "cannot read seccomp_profile " + file + ": " + e.getMessage());
    }
  }

  /**
   * What is wrong with a profile, or null: it must be a JSON object with a {@code defaultAction}
   * and, if any, a {@code syscalls} list.
   */
  static @Nullable String problem(@Nullable JsonNode profile) {
    if (profile == null || !profile.isObject()) {
      return "is not a JSON object";
    }
    if (!profile.path("defaultAction").isTextual()) {
      return "has no defaultAction (see the engine's seccomp documentation)";
    }
    if (profile.has("syscalls") && !profile.get("syscalls").isArray()) {
      return "has a syscalls entry that is not a list";
    }
    return null;
  }

  /** Why the profile cannot be used (the backend is then unavailable), or null. */
  @Nullable String error() {
    return error;
  }

  /** The {@code SecurityOpt} entry for {@code engine}, or empty for the engine's default. */
  Optional<String> securityOpt(String engine) {
    if (file == null || content == null) {
      return Optional.empty();
    }
    return Optional.of("seccomp=" + (engine.equals("podman") ? file.toString() : content));
  }

  /** For the log: which profile the engine applies. */
  String description() {
    return file == null
        ? "the engine's default seccomp profile"
        : "the operator's seccomp profile " + file;
  }

  /** The health {@code seccomp} entry when only the engine filters. */
  String enforcedName() {
    return file == null ? "engine-default" : "engine-profile";
  }

  /**
   * The {@code seccomp} entry of health with {@code guard} under this profile: never more than what
   * is applied.
   */
  String enforcedUnder(SyscallGuard guard) {
    return guard.available() ? guard.policy() : enforcedName();
  }

  /**
   * Logs which filters {@code engine}'s containers run under, warning when Box's own is missing.
   */
  void logUnder(String engine, SyscallGuard guard) {
    if (guard.available()) {
      log.info(
          "{} backend: seccomp {} (box-guard) under {}", engine, guard.policy(), description());
    } else {
      log.warn(
          "{} backend: seccomp none of Box's own: {}; containers get {} only (health reports"
              + " seccomp: {})",
          engine,
          guard.reason(),
          description(),
          enforcedUnder(guard));
    }
  }
}
