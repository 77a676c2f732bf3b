package dev.box.core.process;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.box.core.time.FakeTicker;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class StdoutBufferTest {
  private static final Duration NO_WAIT = Duration.ZERO;

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }

  private static String text(byte[] b) {
    return new String(b, StandardCharsets.US_ASCII);
  }

  /**
   * A buffer of {@code capacity} that delivered all of {@code delivered}, then took {@code more}.
   */
  private static StdoutBuffer deliveredThenWritten(int capacity, String delivered, String more)
      throws InterruptedException {
    StdoutBuffer buffer = new StdoutBuffer(capacity, System::nanoTime);
    buffer.write(bytes(delivered), 0, delivered.length());
    buffer.markDelivered(delivered.length());
    buffer.write(bytes(more), 0, more.length());
    return buffer;
  }

  @Test
  void readsByAbsoluteOffset_acrossTheRingsWrap() throws Exception {
    StdoutBuffer buffer = deliveredThenWritten(8, "abcdef", "ghijk");

    assertThat(buffer.start()).isEqualTo(3);
    assertThat(buffer.end()).isEqualTo(11);
    assertThat(text(buffer.read(6, 100, NO_WAIT))).isEqualTo("ghijk");
    assertThat(text(buffer.read(3, 100, NO_WAIT))).isEqualTo("defghijk");
  }

  @Test
  void anOffsetOlderThanTheBuffer_isGone_withTheFirstAvailableOne() throws Exception {
    StdoutBuffer buffer = deliveredThenWritten(4, "abcd", "ef");

    assertThatThrownBy(() -> buffer.read(0, 10, NO_WAIT))
        .isInstanceOfSatisfying(
            StdoutBuffer.OffsetGoneException.class,
            e -> assertThat(e.firstAvailable()).isEqualTo(2));
  }

  @Test
  void undeliveredBytesAreNeverDropped_theWriterWaitsInstead() throws Exception {
    StdoutBuffer buffer = new StdoutBuffer(4, System::nanoTime);
    buffer.write(bytes("abcd"), 0, 4);
    CompletableFuture<Void> writer =
        CompletableFuture.runAsync(
            () -> {
              try {
                buffer.write(bytes("efgh"), 0, 4);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            });

    await()
        .during(Duration.ofMillis(200))
        .atMost(Duration.ofSeconds(2))
        .until(() -> !writer.isDone());
    assertThat(text(buffer.read(0, 10, NO_WAIT))).isEqualTo("abcd");

    buffer.markDelivered(2);
    await().atMost(Duration.ofSeconds(5)).until(() -> buffer.end() == 6);
    buffer.markDelivered(6);
    writer.get();
    assertThat(text(buffer.read(4, 10, NO_WAIT))).isEqualTo("efgh");
  }

  @Test
  void readWaitsForData_andSeesTheEndOfTheStream() throws Exception {
    StdoutBuffer buffer = new StdoutBuffer(16, System::nanoTime);
    CompletableFuture<byte[]> reader =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return buffer.read(0, 16, Duration.ofSeconds(10));
              } catch (InterruptedException e) {
                throw new IllegalStateException(e);
              }
            });
    buffer.write(bytes("hi"), 0, 2);
    buffer.close();

    assertThat(text(reader.get())).isEqualTo("hi");
    assertThat(buffer.isEndOfStream(0)).isFalse();
    assertThat(buffer.isEndOfStream(2)).isTrue();
    assertThat(buffer.read(2, 16, Duration.ofSeconds(10))).isEmpty();
  }

  @Test
  void aWriteLargerThanTheBuffer_goesThroughAsTheReaderDelivers() throws Exception {
    StdoutBuffer buffer = new StdoutBuffer(3, System::nanoTime);
    CompletableFuture<Void> writer =
        CompletableFuture.runAsync(
            () -> {
              try {
                buffer.write(bytes("0123456789"), 0, 10);
                buffer.close();
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            });
    StringBuilder received = new StringBuilder();
    long offset = 0;
    while (!buffer.isEndOfStream(offset)) {
      byte[] chunk = buffer.read(offset, 2, Duration.ofSeconds(5));
      received.append(text(chunk));
      offset += chunk.length;
      buffer.markDelivered(offset);
    }
    writer.get();

    assertThat(received).hasToString("0123456789");
  }

  /** An hour-long timeout that only the fake ticker can let pass: the test would hang otherwise. */
  @Test
  @Timeout(10)
  void read_givesUpOnceTheTickerPassesItsDeadline() throws Exception {
    FakeTicker ticker = new FakeTicker().autoAdvance(Duration.ofHours(1));
    StdoutBuffer buffer = new StdoutBuffer(4, ticker);

    assertThat(buffer.read(0, 4, Duration.ofHours(1))).isEmpty();
    assertThat(buffer.isEndOfStream(0)).isFalse();
  }

  @Test
  @Timeout(10)
  void aWaitingReader_wokenWithoutData_returnsEmptyWhenTheTickerSaysItsTimeIsUp() throws Exception {
    FakeTicker ticker = new FakeTicker();
    StdoutBuffer buffer = new StdoutBuffer(4, ticker);
    CompletableFuture<byte[]> read = new CompletableFuture<>();
    Thread reader =
        Thread.ofPlatform()
            .start(
                () -> {
                  try {
                    read.complete(buffer.read(0, 4, Duration.ofHours(1)));
                  } catch (Throwable t) {
                    read.completeExceptionally(t);
                  }
                });
    await().until(() -> reader.getState() == Thread.State.TIMED_WAITING);

    buffer.markDelivered(0); // wakes the reader with nothing to read
    await()
        .during(Duration.ofMillis(100))
        .atMost(Duration.ofSeconds(2))
        .until(() -> !read.isDone());
    ticker.advance(Duration.ofHours(1));
    buffer.markDelivered(0);

    assertThat(read.get(5, TimeUnit.SECONDS)).isEmpty();
  }
}
