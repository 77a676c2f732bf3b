package dev.box.core.settings;

import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * A boolean setting as text gives it (a flag, a {@code BOX_*} variable, a config file value, a
 * string in a LangBot section): the one boolean parser of Box's settings.
 *
 * <p>A setting has a default and the spellings that turn it to the other value, compared ignoring
 * case ({@link String#equalsIgnoreCase}); any other text, blank or absent included, leaves the
 * default. Nothing is refused. The spellings belong to the setting because each keeps what it has
 * always accepted: {@code 0} turns a container CPU limit off, as LangBot's {@code
 * cpu_limit_enabled} does, but leaves {@code cgroups} on; and {@code insecure}, which opens the
 * API, turns on only for the exact word {@code true}.
 *
 * @param defaultValue the value of absent, blank or unknown text
 * @param flips the spellings that give the other value
 * @param exact whether the text must be a spelling as it stands; otherwise surrounding whitespace
 *     is ignored
 */
public record BooleanSetting(boolean defaultValue, Set<String> flips, boolean exact) {

  /** Copies the spellings. */
  public BooleanSetting {
    flips = Set.copyOf(flips);
  }

  /**
   * A setting that is on unless the text is one of {@code offSpellings}, surrounding whitespace
   * ignored.
   */
  public static BooleanSetting onUnless(String... offSpellings) {
    return new BooleanSetting(true, Set.of(offSpellings), false);
  }

  /** A setting that is off unless the text is exactly one of {@code onSpellings} (case aside). */
  public static BooleanSetting offUnlessExactly(String... onSpellings) {
    return new BooleanSetting(false, Set.of(onSpellings), true);
  }

  /** The value {@code text} gives; see the class comment. */
  public boolean parse(@Nullable String text) {
    if (text == null) {
      return defaultValue;
    }
    String spelling = exact ? text : text.strip();
    return flips.stream().anyMatch(spelling::equalsIgnoreCase) != defaultValue;
  }
}
