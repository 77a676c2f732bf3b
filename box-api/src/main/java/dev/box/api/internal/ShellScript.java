package dev.box.api.internal;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * Loads a shell program Box runs, kept as a {@code .sh} resource in the package of the class that
 * runs it rather than as a Java string, so that the text shellcheck reads in the test phase is the
 * text the shell runs. Load each once, into a constant: a build that lost a script then fails when
 * its class is first used, never by running an empty program.
 *
 * <p>Such a program is fixed text: what a request decides reaches it through the environment or
 * positional arguments, never by building the text.
 */
public final class ShellScript {
  private static final String SUFFIX = ".sh";

  private ShellScript() {}

  /**
   * The UTF-8 text of the resource {@code name} beside {@code owner}, exactly as stored.
   *
   * @param owner the class whose package holds the script
   * @param name the file name, ending in {@code .sh} (what the shellcheck test looks for)
   * @throws IllegalArgumentException when {@code name} does not end in {@code .sh}
   * @throws IllegalStateException when the resource is missing or blank
   */
  public static String load(Class<?> owner, String name) {
    if (!name.endsWith(SUFFIX) || name.contains("/")) {
      throw new IllegalArgumentException(
          "a shell script is a file name ending in " + SUFFIX + " beside its class, not " + name);
    }
    String where = name + " beside " + owner.getName();
    String text;
    try (InputStream in = owner.getResourceAsStream(name)) {
      if (in == null) {
        throw new IllegalStateException("missing shell script " + where);
      }
      text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read shell script " + where, e);
    }
    if (text.isBlank()) {
      throw new IllegalStateException("empty shell script " + where);
    }
    return text;
  }
}
