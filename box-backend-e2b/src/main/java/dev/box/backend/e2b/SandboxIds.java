package dev.box.backend.e2b;

import java.util.regex.Pattern;

/**
 * What a sandbox id from the service may look like before it goes into a URL path or a host name:
 * letters, digits and dashes, bounded.
 */
final class SandboxIds {
  private static final Pattern ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9-]{0,63}");

  private SandboxIds() {}

  static boolean valid(String id) {
    return ID.matcher(id).matches();
  }
}
