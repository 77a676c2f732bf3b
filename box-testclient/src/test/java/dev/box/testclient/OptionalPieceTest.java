package dev.box.testclient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.opentest4j.TestAbortedException;

class OptionalPieceTest {
  @Test
  void required_listsPiecesByKey_orAll() {
    assertThat(OptionalPiece.required(null, "nsjail")).isFalse();
    assertThat(OptionalPiece.required("", "nsjail")).isFalse();
    assertThat(OptionalPiece.required("nsjail, langbot-client", "nsjail")).isTrue();
    assertThat(OptionalPiece.required("nsjail,langbot-client", "langbot-client")).isTrue();
    assertThat(OptionalPiece.required("nsjail", "mcp-fixture")).isFalse();
    assertThat(OptionalPiece.required("nsjailx", "nsjail")).isFalse();
    assertThat(OptionalPiece.required("ALL", "btrfs-dockerd")).isTrue();
  }

  @Test
  void aPresentPiece_neitherSkipsNorFails() {
    for (OptionalPiece piece : OptionalPiece.values()) {
      piece.assumePresent(true, "unused");
    }
  }

  @Test
  void aMissingPiece_skipsWithItsReason_orFailsWhereTheRunRequiresIt() {
    OptionalPiece piece = OptionalPiece.DOCKER_COMPOSE;
    if (piece.required()) {
      assertThatThrownBy(() -> piece.assumePresent(false, "compose is gone"))
          .isInstanceOf(AssertionError.class)
          .hasMessage(
              "docker-compose missing: compose is gone (BOX_TEST_REQUIRE requires docker-compose)");
    } else {
      assertThatThrownBy(() -> piece.assumePresent(false, "compose is gone"))
          .isInstanceOf(TestAbortedException.class)
          .hasMessage("docker-compose missing: compose is gone");
    }
  }
}
