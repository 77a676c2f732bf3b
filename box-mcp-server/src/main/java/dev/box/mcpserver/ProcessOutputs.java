package dev.box.mcpserver;

import dev.box.agenthost.OutputCut;
import dev.box.api.BoxManagedProcessConflictException;
import dev.box.api.BoxManagedProcessInfo;
import dev.box.api.BoxManagedProcessStatus;
import dev.box.client.AttachOptions;
import dev.box.client.BoxClient;
import dev.box.client.ProcessAttachment;
import dev.box.client.ProcessListener;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * The output of the managed processes the tools follow, one {@link OutputSpool} per process, fed by
 * an attachment to the process's stdout relay.
 *
 * <p>The attachment is what keeps a process running: the server buffers a bounded amount of stdout
 * nobody has read and then makes the process wait. Following it from the start and holding only
 * what a model will be shown keeps the process going and the memory bounded, however long no one
 * asks for its output. A process this server did not start (another client's, or one started before
 * this server restarted) is followed from the first time its output is asked for.
 */
final class ProcessOutputs implements AutoCloseable {
  /** The most processes followed at once; each holds an attachment and a spool. */
  static final int MAX_FOLLOWED = 64;

  private record Key(String sessionId, String processId) {}

  private record Followed(OutputSpool spool, ProcessAttachment attachment) {}

  /** What {@code process_output} reports. */
  record Report(OutputCut output, boolean running, @Nullable Integer exitCode, String note) {}

  private final Map<Key, Followed> followed = new ConcurrentHashMap<>();
  private final int limit;

  /** Outputs cut to {@code limit} characters. */
  ProcessOutputs(int limit) {
    this.limit = limit;
  }

  /**
   * Starts following a process, from the first byte its relay has not delivered yet.
   *
   * @throws dev.box.api.BoxException as {@link BoxClient#attach} does, or {@link
   *     dev.box.api.BoxCapacityExceededException} when {@link #MAX_FOLLOWED} are followed already
   */
  void follow(BoxClient client, String sessionId, String processId) {
    Key key = new Key(sessionId, processId);
    Followed old = followed.remove(key);
    if (old != null) {
      old.attachment().close();
    }
    if (followed.size() >= MAX_FOLLOWED) {
      // Processes that ended but whose last output nobody asked for make room first.
      for (Map.Entry<Key, Followed> ended : List.copyOf(followed.entrySet())) {
        if (ended.getValue().spool().ended() && followed.remove(ended.getKey(), ended.getValue())) {
          ended.getValue().attachment().close();
        }
      }
    }
    if (followed.size() >= MAX_FOLLOWED) {
      throw new dev.box.api.BoxCapacityExceededException(
          "this MCP server follows "
              + MAX_FOLLOWED
              + " processes already; stop one with stop_process first");
    }
    OutputSpool spool = new OutputSpool(limit);
    ProcessAttachment attachment =
        client.attach(
            sessionId,
            processId,
            new ToSpool(spool),
            AttachOptions.defaults().withDelivery(AttachOptions.Delivery.BYTES));
    followed.put(key, new Followed(spool, attachment));
  }

  /**
   * What the process wrote since the last report, and whether it is still running. A process that
   * ended is forgotten once its last output is reported.
   */
  Report take(BoxClient client, String sessionId, String processId) {
    Key key = new Key(sessionId, processId);
    Followed entry = followed.get(key);
    if (entry == null) {
      try {
        follow(client, sessionId, processId);
      } catch (BoxManagedProcessConflictException e) {
        // It exited and everything it wrote was delivered already: only its record is left.
        BoxManagedProcessInfo info = client.process(sessionId, processId);
        return new Report(OutputCut.of(""), false, info.exitCode(), "");
      }
      entry = followed.get(key);
      if (entry == null) {
        return new Report(OutputCut.of(""), true, null, "");
      }
    }
    OutputSpool.Taken taken = entry.spool().take();
    if (!taken.ended()) {
      return new Report(taken.output(), true, null, "");
    }
    followed.remove(key, entry);
    entry.attachment().close();
    if (taken.failure() == null) {
      return new Report(taken.output(), false, taken.exitCode(), "");
    }
    // Following failed; the server's record says whether the process itself is still there.
    BoxManagedProcessInfo info = client.process(sessionId, processId);
    boolean running = info.status() == BoxManagedProcessStatus.RUNNING;
    return new Report(
        taken.output(),
        running,
        info.exitCode(),
        "following the output failed (" + taken.failure() + "); ask again to resume");
  }

  /** Stops following a process (it keeps running unless stopped). */
  void forget(String sessionId, String processId) {
    Followed entry = followed.remove(new Key(sessionId, processId));
    if (entry != null) {
      entry.attachment().close();
    }
  }

  /** Stops following every process of a session. */
  void forgetSession(String sessionId) {
    for (Key key : List.copyOf(followed.keySet())) {
      if (key.sessionId().equals(sessionId)) {
        forget(key.sessionId(), key.processId());
      }
    }
  }

  /** Detaches from every process; they keep running. */
  @Override
  public void close() {
    for (Key key : List.copyOf(followed.keySet())) {
      forget(key.sessionId(), key.processId());
    }
  }

  /** Feeds a spool from an attachment. */
  private static final class ToSpool implements ProcessListener {
    private final OutputSpool spool;

    ToSpool(OutputSpool spool) {
      this.spool = spool;
    }

    @Override
    public void onStdout(byte[] bytes, long offset) {
      spool.write(bytes);
    }

    @Override
    public void onGap(long requested, long firstAvailable) {
      spool.write(
          ("\n[" + (firstAvailable - requested) + " bytes of output were lost]\n")
              .getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    @Override
    public void onExit(int exitCode) {
      spool.exited(exitCode);
    }

    @Override
    public void onFailure(Throwable failure) {
      spool.failed(String.valueOf(failure.getMessage()));
    }

    @Override
    public void onClose(int code, String reason) {
      // Closed without an exit (detached, or the relay ended without one): nothing more comes.
      spool.failed("the relay closed: " + reason);
    }
  }
}
