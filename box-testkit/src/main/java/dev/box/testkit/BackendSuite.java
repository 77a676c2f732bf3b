package dev.box.testkit;

import dev.box.server.ServerConfig;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * What every suite of box-testkit asks of the test class that runs it against one backend: the
 * backend's name, and the server settings it needs.
 */
public abstract class BackendSuite {
  /** For subclasses. */
  protected BackendSuite() {}

  /** The {@code backend} server setting: {@code bwrap}, {@code docker}, {@code podman}, ... */
  protected abstract String backendName();

  /**
   * Further server settings (keys of {@link ServerConfig#KEYS}) for every server the suite starts,
   * for example {@code image} for a container backend. The suite sets {@code port}, {@code
   * data_dir} and {@code backend} itself. By default, for {@code docker} and {@code podman}, this
   * machine's engine and the test image of {@code scripts/engines up}, and nothing for any other
   * backend.
   */
  protected Map<String, String> serverSettings() {
    return ContainerEngines.serverSettings(backendName());
  }

  /** {@code value}, which the suite sets as it starts; a test after a failed start says so. */
  static <T> T started(@Nullable T value) {
    if (value == null) {
      throw new IllegalStateException("the suite's server did not start");
    }
    return value;
  }
}
