package dev.box.backend.docker;

import dev.box.api.BoxValidationException;
import java.util.Locale;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether containers get a CPU quota: as the settings say, until LangBot's {@code box.docker} (or
 * {@code box.podman}) section changes it for the containers created afterwards. A quota that is off
 * is warned about, naming the engine and its section of the config.
 */
final class CpuQuota {
  private static final Logger log = LoggerFactory.getLogger(CpuQuota.class);

  private final String engine;
  private volatile boolean enabled;

  /**
   * @param engine {@code docker} or {@code podman}
   * @param enabled whether the settings give containers a CPU quota
   */
  CpuQuota(String engine, boolean enabled) {
    this.engine = engine;
    this.enabled = enabled;
  }

  /** Whether a container created now gets a CPU quota. */
  boolean enabled() {
    return enabled;
  }

  /**
   * Applies {@code cpu_limit_enabled} of LangBot's section, a boolean or a string where {@code 0}
   * and {@code false} disable the quota; returns whether that changed it.
   *
   * @throws BoxValidationException when the value is neither a boolean nor a string
   */
  boolean configure(Map<String, Object> section) {
    if (!section.containsKey("cpu_limit_enabled")) {
      return false;
    }
    Object value = section.get("cpu_limit_enabled");
    boolean now;
    if (value instanceof Boolean b) {
      now = b;
    } else if (value instanceof String text) {
      String v = text.strip().toLowerCase(Locale.ROOT);
      now = !(v.equals("0") || v.equals("false"));
    } else {
      throw new BoxValidationException(
          "box." + engine + ".cpu_limit_enabled must be a boolean or a string");
    }
    if (now == enabled) {
      return false;
    }
    enabled = now;
    return true;
  }

  /** Logs {@link #disabledWarning} when the quota is off. */
  void warnIfDisabled() {
    if (!enabled) {
      log.warn("{}", disabledWarning(engine));
    }
  }

  /** The warning for a disabled CPU quota, naming the engine and its section of the config. */
  static String disabledWarning(String engine) {
    return (engine.equals("podman") ? "Podman" : "Docker")
        + " sandbox CPU limit is disabled by config (box."
        + engine
        + ".cpu_limit_enabled=false); containers will be started without --cpus.";
  }
}
