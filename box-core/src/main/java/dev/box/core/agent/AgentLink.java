package dev.box.core.agent;

import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.BoxManagedProcessConflictException;
import dev.box.core.backend.ProcessSpec;
import dev.box.core.backend.SandboxGoneException;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.IntConsumer;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server's side of one sandbox's exec agent ({@code box-agent}, see {@code box-guard}): a Unix
 * socket in a directory that only that sandbox has mounted, the agent's connection to it, and one
 * connection per stream of each process the agent starts.
 *
 * <p>The agent is untrusted: code in the sandbox runs as the same user and can kill, replace or
 * impersonate it. So every frame it sends is bounded and checked (a frame of more than {@value
 * #MAX_AGENT_FRAME} bytes, of an unknown type, for an unknown process or out of order breaks the
 * link), every answer has a deadline, and a link that breaks calls {@code onBroken}, which ends the
 * sandbox; the processes the link started then fail with a clear error. A process joins its cgroup
 * through {@link Admission}, by the server, before the agent lets it exec; killing is by cgroup,
 * never by asking the agent. Stream connections must name a process that is waiting for them, with
 * its random token; anything else is closed. At most {@value #MAX_UNCLAIMED} unclaimed connections
 * are read at once; the next ones wait to be accepted (in the kernel's backlog) until one of those
 * is done, so that a flood of bogus connections from the sandbox delays its own streams but never
 * has one of them dropped.
 *
 * <p>Where the server cannot reach the sandbox (a pod of a cluster), the agent runs in network mode
 * instead ({@link #dial}): the server connects to it, control and streams alike, each connection
 * opening with the sandbox's secret ({@link AgentAddress}); nothing is admitted into a cgroup, and
 * every process runs under a keeper in the sandbox that kills its whole tree on request ({@link
 * #spawn(List, Map, boolean)}). The agent is no more trusted for that: a tree it cannot account
 * for, or a kill it does not confirm in time, breaks the link and so ends the sandbox. There the
 * processes belong to the sandbox, not to the link: closing the link leaves them running (another
 * server may serve the sandbox), and {@link #endAll} kills every one, whichever link started it.
 */
public final class AgentLink implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(AgentLink.class);

  /** The largest frame the agent may send; its frames are 9 bytes. */
  static final int MAX_AGENT_FRAME = 64;

  /** The largest spawn request the agent reads (its own bound). */
  static final int MAX_REQUEST = 16 << 20;

  private static final int MAX_UNCLAIMED = 32;
  private static final int VERSION = 1;
  private static final int STREAM_HEADER = 18;
  private static final int EAGAIN = 11;

  private static final SecureRandom RANDOM = new SecureRandom();

  /** Moves a process the agent forked into its cgroup before it runs. */
  @FunctionalInterface
  public interface Admission {
    /**
     * Puts the process the sandbox sees as {@code sandboxPid} into its cgroup.
     *
     * @throws IOException when it cannot: the process is cancelled
     */
    void admit(long sandboxPid) throws IOException;
  }

  private final String name;
  private final @Nullable Listening listening;
  private final @Nullable AgentAddress remote;
  private final LinkDeadlines deadlines;
  private final Map<Integer, AgentProcess.Pending> pending = new ConcurrentHashMap<>();

  /** In network mode, the trees not yet ended, each completed true when it ended, false if lost. */
  private final Map<Integer, CompletableFuture<Boolean>> trees = new ConcurrentHashMap<>();

  /** In network mode, while {@link #endAll} waits: completed when the agent says all ended. */
  private volatile @Nullable CompletableFuture<Void> allEnded;

  private final AtomicInteger ids = new AtomicInteger();
  private final Semaphore unclaimed = new Semaphore(MAX_UNCLAIMED);
  private final Object writeLock = new Object();
  private volatile @Nullable SocketChannel control;
  private volatile @Nullable String broken;
  private volatile Runnable onBroken = () -> {};
  private volatile long agentPid;

  /** The Unix socket the agent connects to, and the server's channel on it. */
  private record Listening(Path socket, ServerSocketChannel channel) {}

  /** A link to the agent that connects to {@code listening}, or that is at {@code remote}. */
  private AgentLink(
      String name,
      @Nullable Listening listening,
      @Nullable AgentAddress remote,
      LinkDeadlines deadlines) {
    this.name = name;
    this.listening = listening;
    this.remote = remote;
    this.deadlines = deadlines;
  }

  /**
   * Listens on {@code dir/socket} for the agent of sandbox {@code name}; {@code dir} is made (mode
   * 0755) and the socket is left connectable by the sandbox user.
   *
   * @param deadlines how long the agent may take to answer, on the timer of the link's owner
   */
  public static AgentLink listen(String name, Path dir, String socketName, LinkDeadlines deadlines)
      throws IOException {
    Files.createDirectories(dir);
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
    Path socket = dir.resolve(socketName);
    Files.deleteIfExists(socket);
    ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
    try {
      server.bind(UnixDomainSocketAddress.of(socket));
      Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-rw-rw-"));
    } catch (IOException | RuntimeException e) {
      server.close();
      throw e;
    }
    return new AgentLink(name, new Listening(socket, server), null, deadlines);
  }

  /**
   * Connects to the agent of sandbox {@code name} in network mode, at {@code remote}, when {@link
   * #awaitAgent} is called.
   *
   * @param deadlines how long the agent may take to answer, on the timer of the link's owner
   */
  public static AgentLink dial(String name, AgentAddress remote, LinkDeadlines deadlines) {
    return new AgentLink(name, null, remote, deadlines);
  }

  /**
   * Waits for the agent to connect and say hello, then serves it.
   *
   * @param onBroken called once when the link breaks (the agent died, misbehaved or went silent)
   * @throws IOException when no agent said hello within {@code timeout}
   */
  public void awaitAgent(Duration timeout, Runnable onBroken) throws IOException {
    this.onBroken = onBroken;
    SocketChannel agent = remote != null ? remote.control(timeout) : accept(timeout);
    ScheduledFuture<?> hello = closeAfter(agent, timeout);
    try {
      ByteBuffer frame = readFrame(agent);
      if (frame.get() != 'H' || frame.remaining() != 8 || frame.getInt() != VERSION) {
        throw new IOException("the exec agent did not say hello");
      }
      agentPid = Integer.toUnsignedLong(frame.getInt());
    } catch (IOException e) {
      agent.close();
      throw e;
    } finally {
      hello.cancel(false);
    }
    control = agent;
    Thread.ofVirtual().name("box-agent-" + name).start(() -> readAgent(agent));
    Listening unix = listening;
    if (unix != null) {
      Thread.ofVirtual()
          .name("box-agent-streams-" + name)
          .start(() -> acceptStreams(unix.channel()));
    }
  }

  private SocketChannel accept(Duration timeout) throws IOException {
    ServerSocketChannel channel = Objects.requireNonNull(listening).channel();
    ScheduledFuture<?> deadline = closeAfter(channel, timeout);
    try {
      return channel.accept();
    } catch (IOException e) {
      throw new IOException("no exec agent connected within " + timeout.toSeconds() + " s", e);
    } finally {
      deadline.cancel(false);
    }
  }

  /**
   * Removes the socket directories under {@code agents} that {@code keep} does not name: those of
   * sandboxes an earlier instance of the server left (it crashed). Each holds at most a socket.
   */
  public static void removeStale(Path agents, Predicate<String> keep) {
    if (!Files.isDirectory(agents)) {
      return;
    }
    try (Stream<Path> dirs = Files.list(agents)) {
      for (Path dir : dirs.toList()) {
        if (keep.test(dir.getFileName().toString())) {
          continue;
        }
        try (Stream<Path> files = Files.list(dir)) {
          for (Path file : files.toList()) {
            Files.deleteIfExists(file);
          }
        }
        Files.deleteIfExists(dir);
      }
    } catch (IOException e) {
      log.warn("cannot remove stale agent sockets under {}: {}", agents, e.toString());
    }
  }

  /** The agent's pid as the sandbox sees it. */
  public long agentPid() {
    return agentPid;
  }

  /** Whether the link works: the agent connected and nothing broke it. */
  public boolean usable() {
    return control != null && broken == null;
  }

  /**
   * Starts {@code argv} with {@code env} through the agent: the agent forks it, {@code admission}
   * puts it into its cgroup, its streams connect, and only then does it exec.
   *
   * @param terminal the size of the terminal it runs on (it then has stdin), or null for none
   * @param tree kills and releases the process's tree (by cgroup)
   * @throws BoxException when the link is broken, or breaks now
   */
  public AgentProcess spawn(
      List<String> argv,
      Map<String, String> env,
      boolean stdin,
      ProcessSpec.@Nullable Terminal terminal,
      Admission admission,
      AgentProcess.Tree tree) {
    return spawn(argv, env, stdin, false, terminal, admission, tree, assigned -> {});
  }

  private AgentProcess spawn(
      List<String> argv,
      Map<String, String> env,
      boolean stdin,
      boolean held,
      ProcessSpec.@Nullable Terminal terminal,
      Admission admission,
      AgentProcess.Tree tree,
      IntConsumer assigned) {
    int id = ids.incrementAndGet();
    assigned.accept(id);
    byte[] token = new byte[8];
    RANDOM.nextBytes(token);
    boolean withStdin = stdin || terminal != null;
    AgentProcess.Pending p = new AgentProcess.Pending(id, token, withStdin, terminal != null);
    pending.put(id, p);
    long sandboxPid;
    if (remote != null) {
      trees.put(id, new CompletableFuture<>());
    }
    try {
      send(AgentFrames.spawn(id, token, withStdin, held, terminal, argv, env));
      dialStreams(p, token);
      sandboxPid = await(p.pid());
    } catch (RuntimeException e) {
      pending.remove(id);
      if (remote != null && usable()) {
        killTree(id);
      }
      throw usable() ? e : gone();
    }
    try {
      admission.admit(sandboxPid);
      SocketChannel out = await(p.stream(1));
      SocketChannel err = await(p.stream(2));
      SocketChannel in = withStdin ? await(p.stream(0)) : null;
      send(AgentFrames.go(id));
      return new AgentProcess(
          p, out, err, in, tree, this::failure, held ? held(p, 0) : null, resizer(id));
    } catch (IOException | RuntimeException e) {
      if (usable()) {
        sendQuietly(AgentFrames.cancel(id));
      }
      pending.remove(id);
      p.closeStreams();
      if (!usable()) {
        throw gone();
      }
      if (e instanceof BoxException box) {
        throw box;
      }
      throw new BoxException(
          BoxErrorCode.INTERNAL_ERROR,
          "cannot start a process in sandbox " + name + ": " + e.getMessage(),
          e);
    }
  }

  /**
   * Starts {@code argv} with {@code env} through an agent in network mode: the agent's keeper in
   * the sandbox ends the process's tree on {@link SandboxProcess#killTree}; terminating is killing
   * there, as the keeper knows no gentler end.
   *
   * @param held whether the agent keeps the process's stdio for another link to {@link #reattach}
   *     when this one ends (a managed process), rather than giving it the stream connections
   * @param terminal the size of the terminal it runs on (it then has stdin and is not held), or
   *     null for none
   * @throws BoxException when the link is broken, or breaks now
   */
  public AgentProcess spawn(
      List<String> argv,
      Map<String, String> env,
      boolean stdin,
      boolean held,
      ProcessSpec.@Nullable Terminal terminal) {
    if (remote == null) {
      throw new IllegalStateException("the agent of " + name + " kills by cgroup: name the tree");
    }
    if (held && terminal != null) {
      throw new IllegalArgumentException("a process on a terminal is not held");
    }
    int[] id = new int[1];
    return spawn(
        argv,
        env,
        stdin,
        held,
        terminal,
        sandboxPid -> {},
        agentTree(id),
        assigned -> id[0] = assigned);
  }

  /** {@link #spawn(List, Map, boolean, boolean, ProcessSpec.Terminal)} without a terminal. */
  public AgentProcess spawn(
      List<String> argv, Map<String, String> env, boolean stdin, boolean held) {
    return spawn(argv, env, stdin, held, null);
  }

  /** Sends the size of the terminal of process {@code id}; a broken link has no terminals. */
  private Consumer<ProcessSpec.Terminal> resizer(int id) {
    return size -> sendQuietly(AgentFrames.resize(id, size));
  }

  /**
   * Takes over the held process whose {@link AgentProcess#handle} is {@code handle}, which a link
   * that has ended started (network mode): its stdio comes on new stream connections, its stdout
   * from {@link AgentProcess#stdoutOffset}, and its exit, if it came already, at once.
   *
   * @return the process, or null when the agent holds none by that handle (it ended, and its output
   *     was all read)
   * @throws BoxManagedProcessConflictException when another link holds it
   * @throws BoxException when the link is broken, or breaks now
   */
  public @Nullable AgentProcess reattach(String handle) {
    if (remote == null) {
      throw new IllegalStateException("the agent of " + name + " holds no process");
    }
    HeldHandle parsed = HeldHandle.parse(handle);
    if (parsed == null) {
      return null;
    }
    int id = ids.incrementAndGet();
    AgentProcess.Pending p = new AgentProcess.Pending(id, parsed.token(), parsed.stdin(), false);
    pending.put(id, p);
    trees.put(id, new CompletableFuture<>());
    long offset;
    try {
      send(AgentFrames.reattach(id, parsed.token()));
      await(p.pid());
      offset = await(p.offset());
      dialStreams(p, parsed.token());
      SocketChannel out = await(p.stream(1));
      SocketChannel err = await(p.stream(2));
      SocketChannel in = parsed.stdin() ? await(p.stream(0)) : null;
      return new AgentProcess(
          p, out, err, in, agentTree(new int[] {id}), this::failure, held(p, offset), resizer(id));
    } catch (RuntimeException e) {
      pending.remove(id);
      p.closeStreams();
      if (p.absent() || p.busy()) {
        trees.remove(id);
      }
      if (p.absent()) {
        return null;
      }
      if (p.busy()) {
        throw new BoxManagedProcessConflictException(
            "another server relays the process " + handle + " of sandbox " + name);
      }
      if (usable()) {
        killTree(id);
      }
      throw usable() ? e : gone();
    }
  }

  /** The tree of the process whose id {@code id} holds, ended by the agent's keeper. */
  private AgentProcess.Tree agentTree(int[] id) {
    return new AgentProcess.Tree() {
      @Override
      public void terminate() {
        killTree(id[0]);
      }

      @Override
      public void kill() {
        killTree(id[0]);
      }

      @Override
      public void release() {}
    };
  }

  /** What held process {@code p} has beyond others: its handle, and how its stdin ends. */
  private AgentProcess.Held held(AgentProcess.Pending p, long offset) {
    String handle = new HeldHandle(p.token(), p.wantsStdin()).toString();
    return new AgentProcess.Held(handle, offset, () -> sendQuietly(AgentFrames.inputEnd(p.id())));
  }

  /** In network mode, connects the streams of {@code p}, which the agent waits for. */
  private void dialStreams(AgentProcess.Pending p, byte[] token) {
    AgentAddress agent = remote;
    if (agent == null) {
      return;
    }
    int[] fds = p.wantsStdin() ? new int[] {1, 2, 0} : new int[] {1, 2};
    for (int fd : fds) {
      SocketChannel stream;
      try {
        stream = agent.stream(p.id(), token, fd, deadlines.reply());
      } catch (IOException e) {
        breakLink("took no stream connection: " + e.getMessage());
        throw failure();
      }
      if (!p.claim(token, fd, stream)) {
        closeQuietly(stream);
      }
    }
  }

  /**
   * Kills the tree of process {@code id} through the agent (network mode) and waits for it to end;
   * a tree the agent lost, or does not end in time, breaks the link.
   */
  private void killTree(int id) {
    CompletableFuture<Boolean> ended = trees.get(id);
    if (ended == null || !usable()) {
      return;
    }
    sendQuietly(AgentFrames.kill(id));
    boolean quiet;
    try {
      quiet = ended.get(deadlines.reply().toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      breakLink("did not end a process tree within " + deadlines.reply().toMillis() + " ms");
      return;
    } catch (ExecutionException e) {
      return;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      breakLink("was interrupted while ending a process tree");
      return;
    }
    if (!quiet) {
      breakLink("lost a process tree");
    }
  }

  /**
   * Kills the trees of every process of the sandbox through the agent (network mode), those other
   * links started included, and waits until the agent says all have ended.
   *
   * @return whether the agent said so within the link's reply deadline; false also when the link is
   *     not usable (the caller removes the sandbox either way)
   */
  public boolean endAll() {
    if (remote == null) {
      throw new IllegalStateException("the agent of " + name + " kills by cgroup");
    }
    CompletableFuture<Void> ended = new CompletableFuture<>();
    allEnded = ended;
    if (!usable()) {
      return false;
    }
    sendQuietly(AgentFrames.endAll());
    try {
      ended.get(deadlines.reply().toNanos(), TimeUnit.NANOSECONDS);
      return true;
    } catch (TimeoutException e) {
      log.warn(
          "sandbox {}: the exec agent did not end every process within {} ms",
          name,
          deadlines.reply().toMillis());
      return false;
    } catch (ExecutionException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } finally {
      allEnded = null;
    }
  }

  /** The error of a start that the link's breaking stopped: nothing of it ran. */
  private SandboxGoneException gone() {
    return new SandboxGoneException(endedMessage());
  }

  /** The error of a process whose link broke. */
  private BoxException failure() {
    return new BoxException(BoxErrorCode.RUNTIME_UNAVAILABLE, endedMessage());
  }

  private String endedMessage() {
    return "the sandbox "
        + name
        + " ended: its exec agent "
        + broken
        + "; the next command starts a new sandbox";
  }

  private <T> T await(CompletableFuture<T> future) {
    try {
      return future.get(deadlines.reply().toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      breakLink("did not answer within " + deadlines.reply().toMillis() + " ms");
      throw failure();
    } catch (ExecutionException e) {
      throw e.getCause() instanceof BoxException box ? box : failure();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new BoxException(BoxErrorCode.RUNTIME_UNAVAILABLE, "interrupted while starting");
    }
  }

  private void send(byte[] frame) {
    SocketChannel channel = control;
    if (channel == null || broken != null) {
      throw failure();
    }
    // An agent that stops reading would block the writer: the deadline breaks the link instead.
    ScheduledFuture<?> deadline =
        deadlines.after(deadlines.reply(), () -> breakLink("stopped reading its requests"));
    try {
      synchronized (writeLock) {
        ByteBuffer buffer = ByteBuffer.wrap(frame);
        while (buffer.hasRemaining()) {
          channel.write(buffer);
        }
      }
    } catch (IOException e) {
      breakLink("closed its connection");
      throw failure();
    } finally {
      deadline.cancel(false);
    }
  }

  private void sendQuietly(byte[] frame) {
    try {
      send(frame);
    } catch (BoxException e) {
      log.debug("sandbox {}: {}", name, e.getMessage());
    }
  }

  private void readAgent(SocketChannel agent) {
    try {
      while (broken == null) {
        ByteBuffer frame = readFrame(agent);
        String wrong = handle(frame);
        if (wrong != null) {
          breakLink(wrong);
          return;
        }
      }
    } catch (IOException e) {
      breakLink(broken != null ? broken : "closed its connection");
    }
  }

  /** Acts on one frame of the agent's; what was wrong with it, or null. */
  private @Nullable String handle(ByteBuffer frame) {
    byte type = frame.get();
    if (type == 'E') {
      return allEnded(frame);
    }
    if (type == 'W') {
      return offset(frame);
    }
    boolean treeFrame = type == 'Q' || type == 'L';
    if (frame.remaining() != (treeFrame ? 4 : 8)) {
      return "sent a frame of the wrong size";
    }
    int id = frame.getInt();
    if (treeFrame) {
      return treeEnded(id, type == 'Q');
    }
    int value = frame.getInt();
    AgentProcess.Pending p = pending.get(id);
    if (p == null) {
      return "answered for a process it was not asked to start";
    }
    switch (type) {
      case 'P' -> {
        if (!p.pid().complete(Integer.toUnsignedLong(value))) {
          return "named a process twice";
        }
      }
      case 'F' -> {
        pending.remove(id);
        p.refuse(value, refusal(p, value));
      }
      case 'X' -> {
        if (!p.pid().isDone()) {
          return "reported an exit before a start";
        }
        pending.remove(id);
        p.exit().complete(exitCode(value));
      }
      default -> {
        return "sent an unknown frame";
      }
    }
    return null;
  }

  /** The error of a start the agent refused with {@code errno}. */
  private BoxException refusal(AgentProcess.Pending p, int errno) {
    if (!p.onTerminal()) {
      return new BoxException(
          BoxErrorCode.INTERNAL_ERROR,
          "sandbox " + name + " cannot start a process: errno " + errno);
    }
    if (errno == EAGAIN) {
      return new BoxException(
          BoxErrorCode.CAPACITY_EXCEEDED,
          "sandbox " + name + " has as many terminals and held processes as its agent relays");
    }
    return new BoxException(
        BoxErrorCode.BACKEND_UNAVAILABLE,
        "sandbox "
            + name
            + " cannot open a terminal (errno "
            + errno
            + "): its image has no usable /dev/ptmx and /dev/pts");
  }

  /** Where the stdout of a process {@link #reattach} took over starts ('W'). */
  private @Nullable String offset(ByteBuffer frame) {
    if (remote == null || frame.remaining() != 12) {
      return "sent a frame of the wrong size or mode";
    }
    AgentProcess.Pending p = pending.get(frame.getInt());
    long offset = frame.getLong();
    // An offset no process could reach in centuries would overflow the offsets that follow it.
    boolean plausible = offset >= 0 && offset < 1L << 60;
    if (p == null || !p.pid().isDone() || !plausible || !p.offset().complete(offset)) {
      return "sent an offset out of order";
    }
    return null;
  }

  /**
   * A tree ended ('Q') or was lost ('L'); an id the link no longer tracks is one whose end was
   * reported already (a kill crossed its natural end).
   */
  private @Nullable String treeEnded(int id, boolean quiet) {
    if (remote == null) {
      return "sent a frame of network mode";
    }
    CompletableFuture<Boolean> ended = trees.remove(id);
    if (ended != null) {
      ended.complete(quiet);
      if (!quiet) {
        return "lost a process tree (its keeper was killed from within the sandbox)";
      }
    }
    return null;
  }

  /** The agent says every tree that {@link #endAll} asked it to end has ended. */
  private @Nullable String allEnded(ByteBuffer frame) {
    CompletableFuture<Void> ended = allEnded;
    if (remote == null || frame.hasRemaining()) {
      return "sent a frame of the wrong size or mode";
    }
    if (ended == null) {
      return "said all ended unasked";
    }
    ended.complete(null);
    return null;
  }

  /** The exit code of a wait status: the code, or 128+N when killed by signal N. */
  static int exitCode(int status) {
    int signal = status & 0x7f;
    return signal == 0 ? (status >> 8) & 0xff : 128 + signal;
  }

  private void acceptStreams(ServerSocketChannel listening) {
    while (broken == null) {
      SocketChannel stream;
      try {
        unclaimed.acquire();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
      try {
        stream = listening.accept();
      } catch (IOException e) {
        unclaimed.release();
        return;
      }
      Thread.ofVirtual().start(() -> claim(stream));
    }
  }

  /** Reads a stream connection's header and hands it to its process; anything else is closed. */
  private void claim(SocketChannel stream) {
    ScheduledFuture<?> deadline = closeAfter(stream, deadlines.reply());
    boolean claimed = false;
    try {
      ByteBuffer header = ByteBuffer.allocate(STREAM_HEADER);
      while (header.hasRemaining()) {
        if (stream.read(header) < 0) {
          return;
        }
      }
      header.flip();
      byte[] token = new byte[8];
      if (header.getInt() != STREAM_HEADER - 4 || header.get() != 'O') {
        return;
      }
      int id = header.getInt();
      header.get(token);
      int fd = header.get();
      AgentProcess.Pending p = pending.get(id);
      claimed = p != null && p.claim(token, fd, stream);
    } catch (IOException e) {
      log.debug("sandbox {}: a stream connection failed: {}", name, e.toString());
    } finally {
      deadline.cancel(false);
      unclaimed.release();
      if (!claimed) {
        closeQuietly(stream);
      }
    }
  }

  /** Reads one length-prefixed frame of at most {@value #MAX_AGENT_FRAME} bytes. */
  private static ByteBuffer readFrame(SocketChannel channel) throws IOException {
    ByteBuffer length = ByteBuffer.allocate(4);
    readFully(channel, length);
    int n = length.flip().getInt();
    if (n < 1 || n > MAX_AGENT_FRAME) {
      throw new IOException("sent a frame of " + Integer.toUnsignedString(n) + " bytes");
    }
    ByteBuffer frame = ByteBuffer.allocate(n);
    readFully(channel, frame);
    return frame.flip();
  }

  private static void readFully(SocketChannel channel, ByteBuffer buffer) throws IOException {
    while (buffer.hasRemaining()) {
      if (channel.read(buffer) < 0) {
        throw new IOException("closed its connection");
      }
    }
  }

  /** Breaks the link once: every process waiting on it fails, and the sandbox ends. */
  public void breakLink(String why) {
    synchronized (this) {
      if (broken != null) {
        return;
      }
      broken = why;
    }
    log.warn("sandbox {}: the exec agent {}; ending the sandbox", name, why);
    closeChannels();
    BoxException failure = failure();
    pending.values().forEach(p -> p.fail(failure));
    pending.clear();
    trees.values().forEach(t -> t.complete(false));
    trees.clear();
    failAllEnded();
    try {
      onBroken.run();
    } catch (RuntimeException e) {
      log.warn("sandbox {}: ending it failed: {}", name, e.toString());
    }
  }

  private void closeChannels() {
    SocketChannel channel = control;
    if (channel != null) {
      closeQuietly(channel);
    }
    Listening unix = listening;
    if (unix == null) {
      return;
    }
    closeQuietly(unix.channel());
    Path path = unix.socket();
    try {
      Files.deleteIfExists(path);
      Files.deleteIfExists(path.getParent());
    } catch (IOException e) {
      log.debug("cannot remove {}: {}", path, e.toString());
    }
  }

  /**
   * Closes the link without ending the sandbox (it is being destroyed, or in network mode left to
   * another server: its processes run on).
   */
  @Override
  public void close() {
    synchronized (this) {
      if (broken == null) {
        broken = "was closed with its sandbox";
      }
    }
    closeChannels();
    BoxException failure = failure();
    pending.values().forEach(p -> p.fail(failure));
    pending.clear();
    failAllEnded();
  }

  private void failAllEnded() {
    CompletableFuture<Void> ended = allEnded;
    if (ended != null) {
      ended.completeExceptionally(failure());
    }
  }

  private ScheduledFuture<?> closeAfter(AutoCloseable channel, Duration timeout) {
    return deadlines.after(timeout, () -> closeQuietly(channel));
  }

  static void closeQuietly(@Nullable AutoCloseable closeable) {
    if (closeable == null) {
      return;
    }
    try {
      closeable.close();
    } catch (Exception e) {
      // Gone either way.
    }
  }
}
