package dev.box.core.agent;

import java.util.HexFormat;
import org.jspecify.annotations.Nullable;

/**
 * How a server names a held process of an exec agent ({@link AgentLink#reattach}): the random token
 * of its spawn, and whether it has a stdin of its own, as text ({@code 0123456789abcdef}, followed
 * by {@code +in} for the latter). The token is worth nothing without the sandbox's secret, which
 * every connection to the agent opens with.
 *
 * @param token the spawn's 8-byte token
 * @param stdin whether the process's stdin is a stream of its own
 */
record HeldHandle(byte[] token, boolean stdin) {
  private static final String WITH_STDIN = "+in";
  private static final HexFormat HEX = HexFormat.of();

  HeldHandle {
    token = token.clone();
  }

  /** The handle {@code text} names, or null when it names none. */
  static @Nullable HeldHandle parse(String text) {
    boolean stdin = text.endsWith(WITH_STDIN);
    String hex = stdin ? text.substring(0, text.length() - WITH_STDIN.length()) : text;
    if (hex.length() != 16) {
      return null;
    }
    try {
      return new HeldHandle(HEX.parseHex(hex), stdin);
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  @Override
  public byte[] token() {
    return token.clone();
  }

  @Override
  public String toString() {
    return HEX.formatHex(token) + (stdin ? WITH_STDIN : "");
  }
}
