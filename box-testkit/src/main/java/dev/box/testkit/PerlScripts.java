package dev.box.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * The perl programs of the network escape suite, run with {@code perl -e}: perl-base is on every
 * Debian machine and in the minimal Debian image, and its IO::Socket::INET is all they use.
 */
final class PerlScripts {
  /** The loop the servers below share, put before each of them; see serve.pl. */
  private static final String SERVE = load("serve.pl");

  /** A TCP listener that answers with a marker line; see listen.pl. */
  static final String LISTEN = SERVE + load("listen.pl");

  /** Connects to numeric address:port targets at once and reports each; see probe.pl. */
  static final String PROBE = load("probe.pl");

  /** A tiny authoritative DNS server for A queries; see dns.pl. */
  static final String DNS = SERVE + load("dns.pl");

  /** Carries connections from a Unix socket to a TCP port; see relay.pl. */
  static final String RELAY = SERVE + load("relay.pl");

  private PerlScripts() {}

  private static String load(String name) {
    try (InputStream in = PerlScripts.class.getResourceAsStream(name)) {
      if (in == null) {
        throw new IllegalStateException("missing resource " + name + " beside PerlScripts");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
