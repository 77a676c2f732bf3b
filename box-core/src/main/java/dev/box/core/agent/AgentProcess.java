package dev.box.core.agent;

import dev.box.api.BoxException;
import dev.box.core.backend.ProcessSpec;
import dev.box.core.backend.SandboxProcess;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * A process started by a sandbox's exec agent: its streams are connections of their own, its exit
 * code is the agent's report, and its tree is terminated and killed by the backend (by cgroup),
 * never by the agent.
 */
public final class AgentProcess implements SandboxProcess {

  /** How the backend ends and releases a process's tree. */
  public interface Tree {
    /** SIGTERM to every process of the tree. */
    void terminate();

    /** SIGKILL to every process of the tree, returning once they are gone. */
    void kill();

    /** Releases the tree's cgroup once it is empty. */
    void release();
  }

  /** A process the agent was asked to start, until its exit. */
  static final class Pending {
    private final int id;
    private final byte[] token;
    private final boolean stdin;
    private final boolean terminal;
    private final CompletableFuture<Long> pid = new CompletableFuture<>();
    private final CompletableFuture<Integer> exit = new CompletableFuture<>();
    private final CompletableFuture<Long> offset = new CompletableFuture<>();
    private volatile int errno;

    @SuppressWarnings("unchecked")
    private final CompletableFuture<SocketChannel>[] streams = new CompletableFuture[3];

    Pending(int id, byte[] token, boolean stdin, boolean terminal) {
      this.id = id;
      this.token = token.clone();
      this.stdin = stdin;
      this.terminal = terminal;
      for (int i = 0; i < streams.length; i++) {
        streams[i] = new CompletableFuture<>();
      }
    }

    int id() {
      return id;
    }

    boolean wantsStdin() {
      return stdin;
    }

    /** Whether it runs on a terminal the agent relays. */
    boolean onTerminal() {
      return terminal;
    }

    byte[] token() {
      return token.clone();
    }

    /** Where the stdout of a reattached process starts. */
    CompletableFuture<Long> offset() {
      return offset;
    }

    CompletableFuture<Long> pid() {
      return pid;
    }

    CompletableFuture<Integer> exit() {
      return exit;
    }

    CompletableFuture<SocketChannel> stream(int fd) {
      return streams[fd];
    }

    /** Takes {@code channel} as stream {@code fd} if the token is this process's and it is due. */
    boolean claim(byte[] offered, int fd, SocketChannel channel) {
      if (fd < 0 || fd > 2 || (fd == 0 && !stdin) || !MessageDigest.isEqual(token, offered)) {
        return false;
      }
      return streams[fd].complete(channel);
    }

    /** The agent refused the start with {@code errno}: whatever still waits fails. */
    void refuse(int errno, BoxException failure) {
      this.errno = errno;
      fail(failure);
    }

    /** Whether the agent refused a reattach because it holds no such process (ENOENT). */
    boolean absent() {
      return errno == ENOENT;
    }

    /** Whether the agent refused a reattach because another link holds the process (EBUSY). */
    boolean busy() {
      return errno == EBUSY;
    }

    /** Fails whatever still waits: the start, the streams and the exit. */
    void fail(BoxException failure) {
      pid.completeExceptionally(failure);
      offset.completeExceptionally(failure);
      exit.completeExceptionally(failure);
      for (CompletableFuture<SocketChannel> s : streams) {
        s.completeExceptionally(failure);
      }
    }

    /** Closes the streams that connected. */
    void closeStreams() {
      for (CompletableFuture<SocketChannel> s : streams) {
        if (s.isDone() && !s.isCompletedExceptionally()) {
          AgentLink.closeQuietly(s.getNow(null));
        }
      }
    }
  }

  private static final int ENOENT = 2;
  private static final int EBUSY = 16;

  /**
   * What a held process has beyond others (network mode): its stdio passes through the agent, which
   * keeps it when the link ends, so that another link can reattach.
   *
   * @param handle what another link reattaches with
   * @param stdoutOffset the offset in its whole stdout of the first byte this link reads
   * @param inputEnd asks the agent to close its stdin after what the stdin stream carried: the end
   *     of the stream alone does not, as a link that ends is not the end of the input
   */
  record Held(String handle, long stdoutOffset, Runnable inputEnd) {}

  private final Pending pending;
  private final List<SocketChannel> channels;
  private final @Nullable Held held;
  private final InputStream stdout;
  private final InputStream stderr;
  private final OutputStream stdin;
  private final Tree tree;
  private final Supplier<BoxException> failure;
  private final Consumer<ProcessSpec.Terminal> resizer;

  AgentProcess(
      Pending pending,
      SocketChannel out,
      SocketChannel err,
      @Nullable SocketChannel in,
      Tree tree,
      Supplier<BoxException> failure,
      @Nullable Held held,
      Consumer<ProcessSpec.Terminal> resizer) {
    this.pending = pending;
    this.channels = in == null ? List.of(out, err) : List.of(out, err, in);
    this.held = held;
    this.stdout = Channels.newInputStream(out);
    this.stderr = Channels.newInputStream(err);
    if (in == null) {
      this.stdin = OutputStream.nullOutputStream();
    } else if (held == null) {
      this.stdin = Channels.newOutputStream(in);
    } else {
      this.stdin = new HeldInput(Channels.newOutputStream(in), held.inputEnd());
    }
    this.tree = tree;
    this.failure = failure;
    this.resizer = resizer;
  }

  @Override
  public OutputStream stdin() {
    return stdin;
  }

  @Override
  public InputStream stdout() {
    return stdout;
  }

  @Override
  public InputStream stderr() {
    return stderr;
  }

  /**
   * {@inheritDoc}
   *
   * @throws BoxException when the sandbox's agent broke its link: the sandbox has ended
   */
  @Override
  public OptionalInt waitFor(Duration timeout) throws InterruptedException {
    try {
      return OptionalInt.of(pending.exit().get(timeout.toNanos(), TimeUnit.NANOSECONDS));
    } catch (TimeoutException e) {
      return OptionalInt.empty();
    } catch (ExecutionException e) {
      throw e.getCause() instanceof BoxException box ? box : failure.get();
    }
  }

  @Override
  public CompletableFuture<Integer> onExit() {
    return pending.exit().copy();
  }

  /**
   * {@inheritDoc}
   *
   * <p>The agent sets the size; after the process has ended it is ignored.
   */
  @Override
  public void resize(ProcessSpec.Terminal size) {
    if (!pending.onTerminal()) {
      SandboxProcess.super.resize(size);
      return;
    }
    resizer.accept(size);
  }

  @Override
  public void terminateTree() {
    tree.terminate();
  }

  @Override
  public void killTree() {
    tree.kill();
  }

  @Override
  public void release() {
    tree.release();
  }

  @Override
  public @Nullable String handle() {
    return held == null ? null : held.handle();
  }

  @Override
  public long stdoutOffset() {
    return held == null ? 0 : held.stdoutOffset();
  }

  /** Closes this link's side of the held process's stdio; the agent keeps the process's side. */
  @Override
  public void detach() {
    if (held == null) {
      throw new UnsupportedOperationException("only a held process outlives its link");
    }
    channels.forEach(AgentLink::closeQuietly);
  }

  /** The stdin of a held process: closing it also asks the agent to close the process's. */
  private static final class HeldInput extends FilterOutputStream {
    private final Runnable inputEnd;
    private boolean closed;

    HeldInput(OutputStream stream, Runnable inputEnd) {
      super(stream);
      this.inputEnd = inputEnd;
    }

    @Override
    public void write(byte[] bytes, int offset, int length) throws IOException {
      out.write(bytes, offset, length);
    }

    @Override
    public void close() throws IOException {
      if (!closed) {
        closed = true;
        inputEnd.run();
      }
      super.close();
    }
  }
}
