package dev.box.server;

import dev.box.core.settings.BooleanSetting;
import java.util.Map;

/**
 * Whether the server keeps metrics, and who may read them.
 *
 * @param enabled whether {@code GET /metrics} exists ({@code metrics}, on unless {@code false});
 *     off, the runtime records nothing and the route answers 404
 * @param open whether {@code GET /metrics} answers without the control token ({@code metrics_open},
 *     off unless {@code true}), for a scraper that holds no token; every other route still requires
 *     it
 */
public record MetricsConfig(boolean enabled, boolean open) {

  /** On unless {@code false}. */
  private static final BooleanSetting ENABLED = BooleanSetting.onUnless("false");

  /** Off unless exactly {@code true}, as {@code insecure}: it opens a route. */
  private static final BooleanSetting OPEN = BooleanSetting.offUnlessExactly("true");

  /** The defaults: metrics kept, behind the control token. */
  public static final MetricsConfig DEFAULTS = new MetricsConfig(true, false);

  /**
   * Reads {@code metrics} and {@code metrics_open} from the resolved values of {@code box serve}.
   */
  static MetricsConfig read(Map<String, String> values) {
    return new MetricsConfig(
        ENABLED.parse(values.get("metrics")), OPEN.parse(values.get("metrics_open")));
  }
}
