package dev.box.sandbox.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.box.sandbox.BackendRuntime;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Who ends the threads that talk to an engine: closing their owner does, and none is left. */
class EngineThreadsTest {
  @TempDir Path dir;

  @Test
  void close_endsEveryThreadOfEveryPool_evenOneBlockedInAStreamRead() throws Exception {
    Recorder recorder = new Recorder();
    EngineThreads threads = new EngineThreads(recorder, recorder, recorder);
    CountDownLatch started = new CountDownLatch(3);
    threads.deadlines().schedule(() -> {}, 1, TimeUnit.HOURS);
    threads.deadlines().execute(started::countDown);
    threads.exits().execute(started::countDown);
    threads
        .streams()
        .execute(
            () -> {
              started.countDown();
              try {
                new CountDownLatch(1).await(); // a read that never ends on its own
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            });
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(recorder.threads).hasSizeGreaterThanOrEqualTo(3).allMatch(Thread::isAlive);

    threads.close();

    assertThat(threads.isClosed()).isTrue();
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> recorder.threads.stream().noneMatch(Thread::isAlive));
  }

  @Test
  void closingAClient_shutsDownTheThreadsItCreated_butNotThoseItWasGiven() throws IOException {
    Path socket = dir.resolve("engine.sock");
    try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      server.bind(UnixDomainSocketAddress.of(socket));
      EngineClient owning = new EngineClient(socket, BackendRuntime.system());
      EngineThreads given = EngineThreads.of(BackendRuntime.system());
      EngineClient borrowing = new EngineClient(socket, given);

      owning.close();
      borrowing.close();

      assertThat(owning.threads().isClosed()).isTrue();
      assertThat(given.isClosed()).isFalse();
      given.close();
    }
  }

  /** Makes daemon platform threads and remembers each. */
  private static final class Recorder implements ThreadFactory {
    final List<Thread> threads = new CopyOnWriteArrayList<>();

    @Override
    public Thread newThread(Runnable task) {
      Thread thread = Thread.ofPlatform().daemon().unstarted(task);
      threads.add(thread);
      return thread;
    }
  }
}
