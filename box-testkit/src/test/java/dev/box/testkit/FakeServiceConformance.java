package dev.box.testkit;

import dev.box.api.BoxDataDir;
import dev.box.core.Hashes;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;

/**
 * The conformance suite against a backend whose machines a fake remote service runs on loopback:
 * the fake starts at the first server's settings with a random credential and stops after the
 * suite, and the backend's host-side objects are the fake's machines marked with the hash of one of
 * the suite's state directories.
 *
 * @param <F> the fake service
 */
abstract class FakeServiceConformance<F extends AutoCloseable> extends BackendConformanceSuite {
  /** The credential the fake accepts and the server is given. */
  protected final String secret = HexFormat.of().formatHex(new SecureRandom().generateSeed(16));

  private @Nullable F fake;

  /** Starts the fake service, accepting {@code secret}. */
  protected abstract F start(String secret) throws IOException;

  /** What the fake holds for the data directory whose hash is {@code label}, each named. */
  protected abstract Stream<String> machinesOf(F fake, String label);

  /** The running fake, started at the first call. */
  protected final synchronized F fake() {
    if (fake == null) {
      try {
        fake = start(secret);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return fake;
  }

  @AfterAll
  void stopFake() throws Exception {
    if (fake != null) {
      fake.close();
    }
  }

  @Override
  protected final Set<String> leftovers() {
    Set<String> found = new TreeSet<>();
    for (Path dataDir : dataDirs()) {
      String label = Hashes.shortSha256(BoxDataDir.stateDir(dataDir).toString());
      machinesOf(fake(), label).forEach(found::add);
    }
    return found;
  }
}
