package dev.box.core.backend;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The pipe between the demultiplexer and a reader: order, end, and what closing frees. */
class ChunkPipeTest {
  /** Runs {@code task} on another thread; what it throws completes the future exceptionally. */
  static <T> CompletableFuture<T> inBackground(Callable<T> task) {
    return CompletableFuture.supplyAsync(
        () -> {
          try {
            return task.call();
          } catch (Exception e) {
            throw new CompletionException(e);
          }
        });
  }

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
    CompletableFuture<Integer> reader = inBackground(() -> pipe.read(new byte[8], 0, 8));
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
    CompletableFuture<Boolean> writer =
        inBackground(
            () -> {
              for (int i = 0; i < 200; i++) {
                pipe.offer(new byte[] {1});
              }
              pipe.finish();
              return true;
            });
    Thread.sleep(100);
    assertThat(writer).as("the queue holds 64 chunks").isNotDone();

    pipe.close();

    writer.get(5, TimeUnit.SECONDS);
  }
}
