package dev.box.server;

import dev.box.core.settings.BooleanSetting;
import java.util.List;
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

  private static final String ENABLED_KEY = "metrics";
  private static final String OPEN_KEY = "metrics_open";

  /** The keys {@link #read} reads. */
  static final List<String> KEYS = List.of(ENABLED_KEY, OPEN_KEY);

  /** The defaults: metrics kept, behind the control token. */
  public static final MetricsConfig DEFAULTS = new MetricsConfig(true, false);

  /**
   * Reads {@code metrics} and {@code metrics_open} from the resolved values of {@code box serve}.
   */
  static MetricsConfig read(Map<String, String> values) {
    return new MetricsConfig(
        ENABLED.parse(values.get(ENABLED_KEY)), OPEN.parse(values.get(OPEN_KEY)));
  }
}
