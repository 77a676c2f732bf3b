package dev.box.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.box.testclient.OptionalPiece;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link ForkContract} on nsjail: a jail's workspace is a host directory, copied as on bubblewrap;
 * its root is the host's, read-only, so there is nothing else to copy.
 */
class ForkNsjailTest extends ForkContract {
  private static @Nullable TestServer box;

  @BeforeAll
  static void start() {
    OptionalPiece.assumeNsjail();
    box = TestServer.start("backend", "nsjail");
  }

  @AfterAll
  static void stop() {
    if (box != null) {
      box.close();
    }
  }

  @Override
  TestServer box() {
    return Objects.requireNonNull(box);
  }

  @Test
  void health_saysAForkCopiesTheWorkspaceOnly() {
    assertThat(box().get("/v1/health").body().path("enforced").path("fork_root").asText())
        .startsWith("none: the nsjail backend keeps no copy of a sandbox's root");
  }
}
