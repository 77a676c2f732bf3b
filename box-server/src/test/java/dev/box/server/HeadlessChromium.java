package dev.box.server;

import dev.box.testclient.OptionalPiece;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Debian's chromium, headless, as a test's browser: it loads a page, runs its scripts, and prints
 * the DOM. Every request to another host than loopback goes to a proxy that does not exist, so the
 * browser sends nothing off the machine (its background services included).
 */
final class HeadlessChromium {
  private static final Path BINARY = Path.of("/usr/bin/chromium");

  private HeadlessChromium() {}

  /** Skips the calling test, with the reason, when chromium is not installed. */
  static void assumePresent() {
    OptionalPiece.CHROMIUM.assumePresent(
        Files.isExecutable(BINARY), "no " + BINARY + " (apt-get install chromium)");
  }

  /** The DOM of {@code url} once the page has loaded (its load event has fired). */
  static String dumpDom(String url) throws IOException, InterruptedException {
    Path profile = Files.createTempDirectory("box-chromium-");
    Process browser =
        new ProcessBuilder(
                List.of(
                    BINARY.toString(),
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--no-first-run",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                    // Nothing leaves the machine: every name fails to resolve but loopback's,
                    // and whatever is not loopback goes to a closed loopback port.
                    "--proxy-server=http://127.0.0.1:9",
                    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
                    "--no-pings",
                    "--disable-domain-reliability",
                    "--user-data-dir=" + profile,
                    "--dump-dom",
                    url))
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .start();
    try {
      String dom = new String(browser.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!browser.waitFor(60, TimeUnit.SECONDS)) {
        throw new IOException("chromium did not exit within 60 s");
      }
      return dom;
    } finally {
      browser.destroyForcibly();
      try (var files = Files.walk(profile)) {
        files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }
}
