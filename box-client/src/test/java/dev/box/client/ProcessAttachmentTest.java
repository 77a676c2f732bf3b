package dev.box.client;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.box.api.BoxManagedProcessConflictException;
import dev.box.api.BoxManagedProcessInfo;
import dev.box.api.BoxManagedProcessNotFoundException;
import dev.box.api.BoxManagedProcessSpec;
import dev.box.api.BoxManagedProcessStatus;
import dev.box.api.BoxRuntimeUnavailableException;
import dev.box.api.BoxSessionNotFoundException;
import dev.box.api.BoxValidationException;
import dev.box.client.ProcessRecorder.Closed;
import dev.box.client.ProcessRecorder.Exit;
import dev.box.client.ProcessRecorder.Failed;
import dev.box.client.ProcessRecorder.Gap;
import dev.box.client.ProcessRecorder.Line;
import dev.box.client.ProcessRecorder.Reconnect;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Attaching to managed processes through a real Box server running real bubblewrap sandboxes.
 * Connections are broken by a {@link TcpProxy} between the client and the server, so both sides see
 * the socket events of a real network failure.
 */
class ProcessAttachmentTest {
  /** 64 KiB of stdout per process, so that a gap is cheap to provoke. */
  @RegisterExtension static final LiveBox box = LiveBox.perClass("process_buffer_bytes", "65536");

  private BoxClient client;
  private TcpProxy proxy;
  private BoxClient viaProxy;
  private String session;
  private final ProcessRecorder recorder = new ProcessRecorder();

  @BeforeEach
  void connect(TestInfo test) {
    client = box.client();
    proxy = TcpProxy.to(box.port());
    viaProxy = box.builder(proxy.uri()).build();
    session = test.getTestMethod().orElseThrow().getName().replaceAll("[^A-Za-z0-9]", "-");
  }

  @AfterEach
  void disconnect() {
    viaProxy.close();
    proxy.close();
  }

  private BoxManagedProcessInfo start(String command, String... args) {
    return box.startInNewSession(session, BoxManagedProcessSpec.of(command, args));
  }

  private BoxManagedProcessInfo startShell(String script) {
    return start("sh", "-c", script);
  }

  /** Sends "one" through {@code cat}, which must echo it: the attachment works before the test. */
  private ProcessAttachment withOneLineEchoed(ProcessAttachment cat) {
    cat.send("one").join();
    recorder.expectLine("one");
    return cat;
  }

  /**
   * Starts {@code cat} and attaches {@link #recorder} to it through {@code via}, echoing a line.
   */
  private ProcessAttachment catAttached(BoxClient via, AttachOptions options) {
    start("cat");
    return withOneLineEchoed(via.attach(session, "default", recorder, options));
  }

  /** Attaches {@link #recorder} through the proxy, reconnecting at most {@code attempts} times. */
  private ProcessAttachment attachViaProxy(int attempts) {
    return viaProxy.attach(
        session, "default", recorder, AttachOptions.defaults().withReconnectAttempts(attempts));
  }

  @Test
  void cat_echoesEachLineSent_asOneStdoutLine() {
    start("cat");

    try (ProcessAttachment cat = client.attach(session, "default", recorder)) {
      cat.send("hello").join();
      cat.send("grüße {\"jsonrpc\":\"2.0\"}").join();

      recorder.expectLine("hello").expectLine("grüße {\"jsonrpc\":\"2.0\"}");
    }
    recorder.expect(new Closed(1000, "detached")).expectNothingMore();
  }

  @Test
  void exit_deliversTheUnterminatedLastLine_thenTheExitCode_thenTheClose() {
    startShell("printf '\\377ok\\n'; echo bye; printf tail; exit 3");

    client.attach(session, "default", recorder);

    recorder
        .expectLine("\uFFFDok")
        .expectLine("bye")
        .expectLine("tail")
        .expectExit(3)
        .expectNothingMore();
  }

  @Test
  void bytes_areDeliveredExactlyAsWritten_withTheirOffsets() {
    startShell("printf '\\377ok\\n'; sleep 0.2; printf 'no newline'");

    client.attach(
        session,
        "default",
        recorder,
        AttachOptions.defaults().withDelivery(AttachOptions.Delivery.BYTES));

    byte[] expected = "\377ok\nno newline".getBytes(java.nio.charset.StandardCharsets.ISO_8859_1);
    assertThat(recorder.stdoutBytes(expected.length, 0)).isEqualTo(expected);
    recorder.expectExit(0);
  }

  @Test
  void droppedConnections_resumeWithoutLosingOrRepeatingALine() {
    // 5000 numbered lines (48 883 bytes, less than the buffer) in batches of 100 every 50 ms.
    startShell(
        "i=1; while [ $i -le 5000 ]; do echo line-$i;"
            + " if [ $((i % 100)) -eq 0 ]; then sleep 0.05; fi; i=$((i+1)); done");

    viaProxy.attach(session, "default", recorder);
    await().atMost(Duration.ofSeconds(20)).until(() -> recorder.lines().size() >= 1000);
    proxy.dropConnections();
    await().atMost(Duration.ofSeconds(20)).until(() -> recorder.lines().size() >= 3000);
    proxy.dropConnections();

    await().atMost(Duration.ofSeconds(30)).until(() -> recorder.last() instanceof Closed);
    assertThat(recorder.lines())
        .containsExactlyElementsOf(
            IntStream.rangeClosed(1, 5000).mapToObj(i -> "line-" + i).toList());
    assertThat(recorder.count(Reconnect.class)).isEqualTo(2);
    assertThat(proxy.connectionsAccepted()).isEqualTo(3);
    assertThat(recorder.events()).endsWith(new Exit(0), new Closed(1000, "exit_code=0"));
  }

  @Test
  void silentConnection_countsAsDroppedAfterTheIdleTimeout_andDeliveryResumes() {
    startShell("i=1; while :; do echo line-$i; i=$((i+1)); sleep 0.02; done");

    viaProxy.attach(
        session,
        "default",
        recorder,
        AttachOptions.defaults().withIdleTimeout(Duration.ofMillis(500)));
    await().atMost(Duration.ofSeconds(20)).until(() -> recorder.lines().size() >= 20);
    proxy.silenceConnections();
    await().atMost(Duration.ofSeconds(20)).until(() -> recorder.count(Reconnect.class) >= 1);
    int seen = recorder.lines().size();
    await().atMost(Duration.ofSeconds(20)).until(() -> recorder.lines().size() >= seen + 20);
    client.stopProcess(session, "default");

    await().atMost(Duration.ofSeconds(20)).until(() -> recorder.last() instanceof Closed);
    List<String> lines = recorder.lines();
    assertThat(lines)
        .containsExactlyElementsOf(
            IntStream.rangeClosed(1, lines.size()).mapToObj(i -> "line-" + i).toList());
  }

  @Test
  void outputAndExitWhileDisconnected_arriveWithTheReconnect() {
    startShell("read x; echo got-$x; sleep 1; echo done; exit 7");
    ProcessAttachment attachment = attachViaProxy(10);
    attachment.send("go").join();
    recorder.expectLine("got-go");

    proxy.refuseConnections(true);
    proxy.dropConnections();
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> client.process(session, "default").status() == BoxManagedProcessStatus.EXITED);
    proxy.refuseConnections(false);

    recorder
        .expect(new Reconnect("got-go\n".length()))
        .expectLine("done")
        .expectExit(7)
        .expectNothingMore();
  }

  /**
   * The server counts bytes as delivered once written to the socket, so stdout lost in flight with
   * the connection looks delivered; after the process exited the client still replays it from its
   * own offset, and learns the exit code. The server ends the silenced connection after its close
   * frame, so the client may have replaced it before the test drops it: only that connection is
   * dropped, never the one replacing it, and either way the client reconnects once.
   */
  @Test
  void exitWhoseLastBytesWereLostInFlight_isReplayed_thenTheExitCode() {
    startShell("read x; echo done; exit 7");
    ProcessAttachment attachment = viaProxy.attach(session, "default", recorder);
    await().atMost(Duration.ofSeconds(10)).until(() -> attachment.offset() == 0);

    proxy.silenceServerToClient();
    attachment.send("go").join();
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () -> {
              BoxManagedProcessInfo info = client.process(session, "default");
              return info.status() == BoxManagedProcessStatus.EXITED && info.stdoutDelivered() == 5;
            });
    proxy.dropSilencedConnections();

    recorder.expect(new Reconnect(0)).expectLine("done").expectExit(7).expectNothingMore();
  }

  @Test
  void offsetNoLongerBuffered_isAGap_andDeliveryContinuesAtTheFirstAvailableByte() {
    startShell("head -c 200000 /dev/zero | tr '\\0' x; echo; cat");
    AttachOptions bytes = AttachOptions.defaults().withDelivery(AttachOptions.Delivery.BYTES);
    ProcessRecorder first = new ProcessRecorder();
    try (ProcessAttachment reader = client.attach(session, "default", first, bytes)) {
      first.stdoutBytes(200_001, 0);
    }

    ProcessAttachment replay = client.attach(session, "default", recorder, bytes.withFrom(0));

    Gap gap = recorder.next(Gap.class);
    assertThat(gap.requested()).isZero();
    assertThat(gap.firstAvailable()).isBetween(200_001L - 65_536, 200_001L);
    recorder.expect(new Reconnect(gap.firstAvailable()));
    byte[] rest =
        recorder.stdoutBytes((int) (200_001 - gap.firstAvailable()), gap.firstAvailable());
    assertThat(new String(rest, UTF_8)).matches("x*\n");
    replay.send("more").join();
    assertThat(recorder.stdoutBytes(5, 200_001)).isEqualTo("more\n".getBytes(UTF_8));
    replay.close();
  }

  @Test
  void closeStdin_endsCat_afterWhatWasSentBefore_andSendBytesWritesStdinAsIs() {
    start("cat");
    ProcessAttachment cat = client.attach(session, "default", recorder);

    cat.sendBytes("raw\nbytes ".getBytes(UTF_8)).join();
    cat.sendBytes(new byte[0]).join();
    cat.send("and a line").join();
    cat.closeStdin().join();

    recorder.expectLine("raw").expectLine("bytes and a line").expectExit(0);
    assertThat(cat.send("late")).isCompletedExceptionally();
  }

  @Test
  void close_detaches_theProcessKeepsRunning_andTheNextAttachmentContinues() {
    start("cat");
    ProcessAttachment first = withOneLineEchoed(client.attach(session, "default", recorder));

    first.close();

    recorder.expect(new Closed(1000, "detached")).expectNothingMore();
    assertThat(client.process(session, "default").status())
        .isEqualTo(BoxManagedProcessStatus.RUNNING);
    ProcessRecorder second = new ProcessRecorder();
    try (ProcessAttachment next = client.attach(session, "default", second)) {
      next.send("two").join();
      second.expectLine("two");
    }
  }

  @Test
  void closingTheClient_detachesItsOpenAttachments() {
    start("cat");
    BoxClient own = box.builder(box.uri()).build();
    withOneLineEchoed(own.attach(session, "default", recorder));

    assertTimeoutPreemptively(Duration.ofSeconds(10), own::close);

    recorder.expect(new Closed(1000, "detached")).expectNothingMore();
    assertThat(client.process(session, "default").status())
        .isEqualTo(BoxManagedProcessStatus.RUNNING);
  }

  @Test
  void stopProcess_endsTheAttachmentWithTheExitCode_andForgetsTheProcess() {
    start("sleep", "1000");
    ProcessAttachment sleeper = client.attach(session, "default", recorder);
    await().atMost(Duration.ofSeconds(10)).until(() -> sleeper.offset() == 0);

    client.stopProcess(session, "default");

    recorder.expectExit(143);
    assertThatThrownBy(() -> client.process(session, "default"))
        .isInstanceOf(BoxManagedProcessNotFoundException.class);
  }

  @Test
  void startProcess_reportsTheProcess_withEnvNamesButNotValues() {
    BoxManagedProcessInfo info =
        box.startInNewSession(
            session,
            BoxManagedProcessSpec.of("sleep", "1000")
                .withProcessId("sleeper")
                .withEnv(Map.of("TOKEN", "s3cret", "A", "1")));

    assertThat(info.processId()).isEqualTo("sleeper");
    assertThat(info.status()).isEqualTo(BoxManagedProcessStatus.RUNNING);
    assertThat(info.command()).isEqualTo("sleep");
    assertThat(info.args()).containsExactly("1000");
    assertThat(info.envKeys()).containsExactly("A", "TOKEN");
    assertThat(client.process(session, "sleeper")).isEqualTo(info);
    client.stopProcess(session, "sleeper");
  }

  @Test
  void refusals_areTheServersExceptions() {
    start("true");
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> client.process(session, "default").status() == BoxManagedProcessStatus.EXITED);

    assertThatThrownBy(() -> client.attach(session, "default", recorder))
        .isInstanceOf(BoxManagedProcessConflictException.class)
        .hasMessage("managed process default in session " + session + " is not running");
    assertThatThrownBy(() -> client.attach(session, "nope", recorder))
        .isInstanceOf(BoxManagedProcessNotFoundException.class);
    assertThatThrownBy(
            () -> client.startProcess("no-such-session", BoxManagedProcessSpec.of("cat")))
        .isInstanceOf(BoxSessionNotFoundException.class);
    assertThatThrownBy(() -> client.attach(session, " ", recorder))
        .isInstanceOf(BoxValidationException.class)
        .hasMessage("process_id must not be empty");
    assertThat(recorder.events()).isEmpty();
  }

  @Test
  void withReconnectingOff_aDropEndsTheAttachmentWithAFailure() {
    start("cat");
    ProcessAttachment cat = withOneLineEchoed(attachViaProxy(0));

    proxy.dropConnections();

    Failed failed = recorder.next(Failed.class);
    assertThat(failed.failure())
        .isInstanceOf(BoxRuntimeUnavailableException.class)
        .hasMessageStartingWith(
            "lost the relay of managed process default in session "
                + session
                + " (reconnecting is off): ");
    assertThat(client.process(session, "default").status())
        .isEqualTo(BoxManagedProcessStatus.RUNNING);
  }

  @Test
  void failedReconnects_waitADoublingBackoffCappedAtTwoSeconds_thenEndWithAFailure() {
    FakeTime time = new FakeTime();
    try (BoxClient timed = box.builder(proxy.uri()).time(time, time).build()) {
      ProcessAttachment cat = catAttached(timed, AttachOptions.defaults().withReconnectAttempts(7));

      proxy.refuseConnections(true);
      proxy.dropConnections();

      Failed failed = recorder.next(Failed.class);
      assertThat(failed.failure())
          .isInstanceOf(BoxRuntimeUnavailableException.class)
          .hasMessageContaining("could not reconnect in 7 attempts");
      assertThat(time.sleeps())
          .containsExactly(
              Duration.ofMillis(100),
              Duration.ofMillis(200),
              Duration.ofMillis(400),
              Duration.ofMillis(800),
              Duration.ofMillis(1600),
              Duration.ofSeconds(2),
              Duration.ofSeconds(2));
    }
  }

  /** An hour of silence that only the fake ticker lets pass: the test would time out otherwise. */
  @Test
  void silence_isMeasuredByTheClientsTicker() {
    FakeTime time = new FakeTime();
    try (BoxClient timed = box.builder(proxy.uri()).time(time, time).build()) {
      ProcessAttachment cat =
          catAttached(timed, AttachOptions.defaults().withIdleTimeout(Duration.ofHours(1)));

      proxy.silenceServerToClient();
      time.advance(Duration.ofHours(1).plusMillis(1));

      recorder.next(Reconnect.class);
      assertThat(time.sleeps()).containsExactly(Duration.ofMillis(100));
      cat.send("two").join();
      recorder.expectLine("two");
    }
  }

  @Test
  void aListenerThatThrows_endsTheAttachmentWithItsFailure() {
    start("cat");
    List<Object> calls = new CopyOnWriteArrayList<>();
    IllegalStateException boom = new IllegalStateException("boom");
    ProcessAttachment cat =
        client.attach(
            session,
            "default",
            new ProcessListener() {
              @Override
              public void onStdoutLine(String line) {
                calls.add(line);
                throw boom;
              }

              @Override
              public void onFailure(Throwable failure) {
                calls.add(failure);
              }
            });

    cat.send("one").join();

    await().atMost(Duration.ofSeconds(10)).until(() -> calls.size() == 2);
    assertThat(calls).containsExactly("one", boom);
    assertThat(cat.send("two")).isCompletedExceptionally();
  }

  @Test
  void send_refusesANewlineOrACarriageReturn() {
    start("cat");
    try (ProcessAttachment cat = client.attach(session, "default", recorder)) {
      assertThatThrownBy(() -> cat.send("two\nlines"))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage(
              "a stdin line must not contain \\n: send each line on its own, or bytes with"
                  + " sendBytes");
      assertThatThrownBy(() -> cat.send("two\rlines"))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage(
              "a stdin line must not contain \\r: send each line on its own, or bytes with"
                  + " sendBytes");
    }
    assertThat(recorder.events()).doesNotHaveAnyElementsOfTypes(Line.class);
  }
}
