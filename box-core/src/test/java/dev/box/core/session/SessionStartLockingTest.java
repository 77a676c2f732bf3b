package dev.box.core.session;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.box.api.BoxSpec;
import dev.box.core.RuntimeConfig;
import dev.box.core.backend.BackendChoice;
import dev.box.core.backend.BackendStatus;
import dev.box.core.backend.Foreground;
import dev.box.core.backend.ProcessSpec;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxBackend;
import dev.box.core.backend.SandboxProcess;
import dev.box.core.backend.SandboxSpec;
import dev.box.core.exec.ExecRunner;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.FutureTask;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the session manager holds while a backend starts a sandbox, which can take minutes (an image
 * pull): a backend switch answers at once, the backend is not closed under the start, and a second
 * request for the same id waits for the first sandbox instead of starting another.
 *
 * <p>The backends are fakes whose start blocks on a latch: these are unit tests of the manager's
 * locking, and no real backend can be held in the middle of a start on demand.
 */
class SessionStartLockingTest {
  @TempDir Path dataDir;

  private final SlowBackend docker = new SlowBackend("docker");
  private final SlowBackend bwrap = new SlowBackend("bwrap");
  private final CountDownLatch selecting = new CountDownLatch(1);
  private volatile CountDownLatch selected = new CountDownLatch(0);
  private final ExecutorService pumps = ExecRunner.newPumpPool();
  private SessionManager sessions;

  @BeforeEach
  void start() {
    sessions =
        new SessionManager(
            new BackendChoice(docker, "docker", "test", Map.of()),
            RuntimeConfig.defaults(dataDir),
            Clock.systemUTC(),
            System::nanoTime,
            pumps,
            "test",
            SessionListener.NONE,
            new Foreground());
    sessions.allowBackendSwitch(this::select);
  }

  /** Opens {@code name}, once {@link #selected} lets it. */
  private BackendChoice select(String name) {
    selecting.countDown();
    awaitOpened(selected, "the selection end");
    return new BackendChoice(name.equals("bwrap") ? bwrap : docker, name, "test", Map.of());
  }

  @AfterEach
  void stop() {
    docker.release.countDown();
    bwrap.release.countDown();
    selected.countDown();
    sessions.shutdown();
    pumps.shutdownNow();
  }

  private static BoxSpec spec(String id) {
    return BoxSpec.builder(id).build();
  }

  private Background<SessionManager.Acquired> createInBackground(String id) {
    return Background.start(() -> sessions.createOrReuse(spec(id)));
  }

  /** Creates {@code id} in the background and returns once its start blocks in the backend. */
  private Background<SessionManager.Acquired> createBlockedInStart(String id) throws Exception {
    Background<SessionManager.Acquired> create = createInBackground(id);
    assertThat(docker.entered.await(30, SECONDS)).isTrue();
    return create;
  }

  private Background<SessionManager.Switch> switchInBackground(String name) {
    return Background.start(() -> sessions.switchBackend(name));
  }

  /** Waits for {@code latch}, which the test opens; fails when it never does. */
  private static void awaitOpened(CountDownLatch latch, String what) {
    try {
      if (!latch.await(60, SECONDS)) {
        throw new IllegalStateException("the test never let " + what);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** Work running on its own thread, so a test can see it block. */
  private record Background<T>(FutureTask<T> result, Thread thread) {
    static <T> Background<T> start(Callable<T> work) {
      FutureTask<T> task = new FutureTask<>(work);
      return new Background<>(task, Thread.ofVirtual().start(task));
    }

    /** The outcome, waiting for it at most 30 s. */
    T get() throws Exception {
      return result.get(30, SECONDS);
    }

    /** Waits until the thread is parked: it waits for what the test holds. */
    Background<T> awaitBlocked() {
      await()
          .atMost(30, SECONDS)
          .until(
              () ->
                  thread.getState() == Thread.State.WAITING
                      || thread.getState() == Thread.State.TIMED_WAITING);
      return this;
    }
  }

  @Test
  void aSwitchDuringASlowStart_isRefusedAtOnce_andDoesNotCloseTheStartingBackend()
      throws Exception {
    Background<SessionManager.Acquired> create = createBlockedInStart("s1");

    Background<SessionManager.Switch> switched = switchInBackground("bwrap");

    assertThat(switched.get()).isEqualTo(SessionManager.Switch.BUSY);
    assertThat(docker.closed).isFalse();
    docker.release.countDown();
    assertThat(create.get().created()).isTrue();
    assertThat(sessions.backendChoice().backend()).isSameAs(docker);
  }

  @Test
  void aSecondRequestForTheSameId_waitsForTheStartInProgress_andReusesItsSandbox()
      throws Exception {
    Background<SessionManager.Acquired> first = createBlockedInStart("s1");
    Background<SessionManager.Acquired> second = createInBackground("s1").awaitBlocked();

    docker.release.countDown();

    assertThat(first.get().created()).isTrue();
    assertThat(second.get().created()).isFalse();
    assertThat(docker.starts).hasValue(1);
    assertThat(sessions.size()).isEqualTo(1);
  }

  @Test
  void otherIdsAndReads_doNotWaitForASlowStart() throws Exception {
    Background<SessionManager.Acquired> slow = createBlockedInStart("slow");
    docker.entered = new CountDownLatch(1);
    docker.startsBlock = false;

    assertThat(createInBackground("other").get().created()).isTrue();
    assertThat(sessions.list()).extracting(i -> i.sessionId()).containsExactly("other");

    docker.release.countDown();
    assertThat(slow.get().created()).isTrue();
  }

  @Test
  void aDeleteDuringTheStart_waitsForIt_andStopsTheNewSandbox() throws Exception {
    Background<SessionManager.Acquired> create = createBlockedInStart("s1");
    Background<Boolean> delete =
        Background.start(
                () -> {
                  sessions.delete("s1");
                  return true;
                })
            .awaitBlocked();

    docker.release.countDown();

    assertThat(create.get().created()).isTrue();
    assertThat(delete.get()).isTrue();
    assertThat(sessions.size()).isZero();
    await().atMost(30, SECONDS).until(() -> docker.destroyed.get() == 1);
  }

  @Test
  void aSwitchWithNoSession_closesTheOldBackend_andNewSessionsStartOnTheNewOne() {
    bwrap.startsBlock = false;

    assertThat(sessions.switchBackend("bwrap")).isEqualTo(SessionManager.Switch.DONE);

    assertThat(docker.closed).isTrue();
    assertThat(bwrap.orphansRemoved).isTrue();
    assertThat(sessions.createOrReuse(spec("s1")).info().backendName()).isEqualTo("bwrap");
    assertThat(sessions.switchBackend("docker")).isEqualTo(SessionManager.Switch.BUSY);
  }

  @Test
  void aCreateDuringASwitch_waitsForIt_andStartsOnTheNewBackend() throws Exception {
    selected = new CountDownLatch(1);
    bwrap.startsBlock = false;
    Background<SessionManager.Switch> switched = switchInBackground("bwrap");
    assertThat(selecting.await(30, SECONDS)).isTrue();

    Background<SessionManager.Acquired> create = createInBackground("s1").awaitBlocked();
    selected.countDown();

    assertThat(switched.get()).isEqualTo(SessionManager.Switch.DONE);
    assertThat(create.get().info().backendName()).isEqualTo("bwrap");
    assertThat(docker.starts).hasValue(0);
  }

  /** A backend whose starts block until {@link #release} opens, unless they are told not to. */
  private static final class SlowBackend implements SandboxBackend {
    private final String name;
    final CountDownLatch release = new CountDownLatch(1);
    volatile CountDownLatch entered = new CountDownLatch(1);
    volatile boolean startsBlock = true;
    final AtomicInteger starts = new AtomicInteger();
    final AtomicInteger destroyed = new AtomicInteger();
    volatile boolean closed;
    volatile boolean orphansRemoved;

    SlowBackend(String name) {
      this.name = name;
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    public BackendStatus status() {
      return new BackendStatus(name, true, "fake", Map.of());
    }

    @Override
    public Sandbox start(SandboxSpec spec) {
      starts.incrementAndGet();
      boolean block = startsBlock;
      entered.countDown();
      if (block) {
        awaitOpened(release, "the start end");
      }
      return new FakeSandbox(spec.sandboxName(), destroyed);
    }

    @Override
    public void removeOrphans() {
      orphansRemoved = true;
    }

    @Override
    public void close() {
      closed = true;
    }
  }

  private record FakeSandbox(String id, AtomicInteger destroyed) implements Sandbox {
    @Override
    public boolean isAlive() {
      return true;
    }

    @Override
    public SandboxProcess spawn(ProcessSpec spec) {
      throw new UnsupportedOperationException("not needed by these tests");
    }

    @Override
    public void destroy() {
      destroyed.incrementAndGet();
    }
  }
}
