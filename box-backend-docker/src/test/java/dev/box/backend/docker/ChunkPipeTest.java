package dev.box.backend.docker;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ChunkPipeTest {
  @Test
  void readsChunksInOrderThenTheEnd() throws Exception {
    ChunkPipe pipe = new ChunkPipe();
    pipe.offer("ab".getBytes(StandardCharsets.UTF_8));
    pipe.offer("c".getBytes(StandardCharsets.UTF_8));
    pipe.finish();

    assertThat(new String(pipe.readAllBytes(), StandardCharsets.UTF_8)).isEqualTo("abc");
    assertThat(pipe.read()).isEqualTo(-1);
  }

  @Test
  void closingWakesABlockedReaderWithTheEnd_andLaterChunksAreDropped() throws Exception {
    ChunkPipe pipe = new ChunkPipe();
    CompletableFuture<Integer> reader =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return pipe.read(new byte[8], 0, 8);
              } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
              }
            });
    Thread.sleep(100);
    assertThat(reader).isNotDone();

    pipe.close();

    assertThat(reader.get(5, TimeUnit.SECONDS)).isEqualTo(-1);
    pipe.offer("late".getBytes(StandardCharsets.UTF_8));
    pipe.finish();
    assertThat(pipe.read()).isEqualTo(-1);
  }

  @Test
  void closingFreesAWriterWaitingOnAFullQueue() throws Exception {
    ChunkPipe pipe = new ChunkPipe();
    CompletableFuture<Void> writer =
        CompletableFuture.runAsync(
            () -> {
              try {
                for (int i = 0; i < 200; i++) {
                  pipe.offer(new byte[] {1});
                }
                pipe.finish();
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            });
    Thread.sleep(100);
    assertThat(writer).as("the queue holds 64 chunks").isNotDone();

    pipe.close();

    writer.get(5, TimeUnit.SECONDS);
  }
}
