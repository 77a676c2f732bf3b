package dev.box.backend.microvm;

import dev.box.api.BoxSpec;
import java.nio.file.Path;
import org.jspecify.annotations.Nullable;

/**
 * Where the microvm backend takes sessions' images from: a container engine that has them (Docker,
 * or Podman through its Docker-compatible socket), each exported once into a root disk that every
 * VM of that image shares ({@code images} is then declared); a session of the server's default
 * image boots the default root that {@code scripts/microvm} builds, as every session does when no
 * engine is given.
 *
 * @param engineSocket the engine's API socket, or null for none
 * @param defaultImage the image of specs that name none, or null for {@link BoxSpec#DEFAULT_IMAGE}
 * @param maxMb what an image's exported file system may hold, in MiB
 */
public record MicrovmImages(
    @Nullable Path engineSocket, @Nullable String defaultImage, long maxMb) {
  /** What an image's file system may hold when the operator sets no bound, in MiB. */
  public static final long DEFAULT_MAX_MB = 4096;

  /** Validates {@code maxMb}. */
  public MicrovmImages {
    if (maxMb < 1) {
      throw new IllegalArgumentException("the bound of an image's root must be at least 1 MiB");
    }
  }

  /** No engine: every session boots the default root, and a spec's image is only recorded. */
  public static MicrovmImages none() {
    return new MicrovmImages(null, null, DEFAULT_MAX_MB);
  }

  /**
   * The bound {@code BOX_MICROVM_IMAGE_MAX_MB} sets ({@code env}, its value), else {@link
   * #DEFAULT_MAX_MB}.
   *
   * @throws IllegalArgumentException when it is not a whole number of MiB from 1 to 1048576
   */
  public static long maxMb(@Nullable String env) {
    if (env == null || env.isBlank()) {
      return DEFAULT_MAX_MB;
    }
    String value = env.strip();
    if (!value.matches("[1-9][0-9]{0,6}") || Long.parseLong(value) > 1024 * 1024) {
      throw new IllegalArgumentException(
          "BOX_MICROVM_IMAGE_MAX_MB must be a whole number of MiB from 1 to 1048576, not '"
              + value
              + "'");
    }
    return Long.parseLong(value);
  }

  /** Whether a session of {@code image} boots the default root. */
  boolean isDefault(String image) {
    return image.isBlank()
        || image.equals(BoxSpec.DEFAULT_IMAGE)
        || (defaultImage != null && image.equals(defaultImage));
  }
}
