package dev.box.client;

import com.fasterxml.jackson.core.type.TypeReference;
import dev.box.api.BoxBackendHealth;
import dev.box.api.BoxDataDir;
import dev.box.api.BoxException;
import dev.box.api.BoxExecutionResult;
import dev.box.api.BoxForkRequest;
import dev.box.api.BoxManagedProcessInfo;
import dev.box.api.BoxManagedProcessSpec;
import dev.box.api.BoxPreviewLink;
import dev.box.api.BoxRuntimeStatus;
import dev.box.api.BoxRuntimeUnavailableException;
import dev.box.api.BoxSessionInfo;
import dev.box.api.BoxSnapshot;
import dev.box.api.BoxSnapshotList;
import dev.box.api.BoxSnapshotRequest;
import dev.box.api.BoxSpec;
import dev.box.api.BoxValidationException;
import dev.box.api.time.Ticker;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * A client of one Box server's HTTP API.
 *
 * <p>Every method sends one request and returns the wire type the server answered with. Failures
 * are always {@link BoxException}s: an error answer becomes the subtype the server raised (for
 * example {@link dev.box.api.BoxSessionNotFoundException}), and a server that cannot be reached or
 * does not answer in time becomes a {@link BoxRuntimeUnavailableException}.
 *
 * <p>A server requires its control token on every request but the probes, unless it runs with
 * {@code --insecure}. Give it to the {@linkplain #builder builder} with {@link
 * Builder#controlToken}, {@link Builder#controlTokenFrom} (the file a server started without a
 * configured token keeps it in) or {@link Builder#discoverControlToken()} (as the {@code box}
 * command finds it); without one, every call fails with an {@code unauthorized} {@link
 * BoxException}.
 *
 * <p>A client is immutable and thread-safe; share one per server. Close it to release the
 * connections of the underlying {@link HttpClient}.
 */
public final class BoxClient implements AutoCloseable {
  /** The time a request may take when the builder sets none. */
  public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(30);

  private static final TypeReference<List<BoxSessionInfo>> SESSION_LIST = new TypeReference<>() {};

  private final URI baseUri;
  private final ServerHttp http;
  private final Set<ProcessAttachment> attachments = ConcurrentHashMap.newKeySet();
  private final Ticker ticker;
  private final Sleeper sleeper;

  private BoxClient(
      URI baseUri,
      @Nullable String controlToken,
      Duration requestTimeout,
      Ticker ticker,
      Sleeper sleeper) {
    this.baseUri = baseUri;
    this.ticker = ticker;
    this.sleeper = sleeper;
    this.http = new ServerHttp(baseUri, controlToken, requestTimeout);
  }

  /**
   * A client of the server at {@code baseUri} without a control token and with the {@linkplain
   * #DEFAULT_REQUEST_TIMEOUT default request timeout}.
   *
   * @param baseUri the server's address, for example {@code http://127.0.0.1:5410}
   * @throws IllegalArgumentException when {@code baseUri} is not an http or https URL with a host
   */
  public static BoxClient connect(URI baseUri) {
    return builder(baseUri).build();
  }

  /**
   * A builder of a client of the server at {@code baseUri}, to set a control token or a timeout. It
   * sends no token until told to.
   *
   * @param baseUri the server's address; a path prefix such as {@code http://proxy/box/} is kept
   * @throws IllegalArgumentException when {@code baseUri} is not an http or https URL with a host
   */
  public static Builder builder(URI baseUri) {
    return new Builder(baseUri);
  }

  /** The server's address this client sends requests to. */
  public URI baseUri() {
    return baseUri;
  }

  /** The backend that runs sandboxes, whether it is available and which limits it enforces. */
  public BoxBackendHealth health() {
    return http.call("GET", "/v1/health", null, requestTimeout(), BoxBackendHealth.class);
  }

  /** The runtime's status: backend health, session count, idle TTL and configured limits. */
  public BoxRuntimeStatus status() {
    return http.call("GET", "/v1/status", null, requestTimeout(), BoxRuntimeStatus.class);
  }

  /** Every live session, in the server's order. */
  public List<BoxSessionInfo> sessions() {
    return http.call("GET", "/v1/sessions", null, requestTimeout(), SESSION_LIST);
  }

  /**
   * One live session.
   *
   * @throws dev.box.api.BoxSessionNotFoundException when no session has this id
   * @throws BoxValidationException when {@code sessionId} is blank
   */
  public BoxSessionInfo session(String sessionId) {
    return http.call(
        "GET", Routes.session(sessionId), null, requestTimeout(), BoxSessionInfo.class);
  }

  /**
   * Creates the session {@code spec} names from its session fields, or returns it when it exists
   * with the same settings.
   *
   * @throws dev.box.api.BoxSessionConflictException when it exists with other settings
   * @throws dev.box.api.BoxCapacityExceededException when the server holds its maximum of sessions
   */
  public BoxSessionInfo createSession(BoxSpec spec) {
    return http.call(
        "POST", Routes.session(spec.sessionId()), spec, requestTimeout(), BoxSessionInfo.class);
  }

  /**
   * Freezes every process of the session: they keep their memory and use no CPU until {@link
   * #resume} or the next exec, files call, process start or attach, which resume it. Pausing a
   * paused session changes nothing.
   *
   * @return the session, {@link dev.box.api.BoxSessionState#PAUSED}
   * @throws dev.box.api.BoxSessionNotFoundException when no session has this id
   * @throws BoxValidationException when {@code sessionId} is blank, or the server's backend cannot
   *     pause
   */
  public BoxSessionInfo pause(String sessionId) {
    return changeState(sessionId, "pause");
  }

  /**
   * Thaws a paused session; resuming a running session changes nothing.
   *
   * @return the session, {@link dev.box.api.BoxSessionState#RUNNING}
   * @throws dev.box.api.BoxSessionNotFoundException when no session has this id
   * @throws BoxValidationException when {@code sessionId} is blank
   */
  public BoxSessionInfo resume(String sessionId) {
    return changeState(sessionId, "resume");
  }

  /** Posts to the session's {@code action} route, which answers with the session. */
  private BoxSessionInfo changeState(String sessionId, String action) {
    String route = Routes.session(sessionId) + "/" + action;
    return http.call("POST", route, null, requestTimeout(), BoxSessionInfo.class);
  }

  /**
   * Starts the new session {@code newId} as a fork of {@code sourceId}: the source's spec (image,
   * limits, network, mounts) and a copy of its private workspace at this instant; no process is
   * copied, and neither sees the other's later writes. A host-path workspace and extra mounts are
   * mounted again, not copied. The fork is not persistent; see {@link #fork(String,
   * BoxForkRequest)}.
   *
   * @return the new session
   * @throws dev.box.api.BoxSessionNotFoundException when no session has the id {@code sourceId}
   * @throws dev.box.api.BoxSessionConflictException when a session has the id {@code newId}
   * @throws BoxValidationException when an id is blank or {@code newId} is {@code sourceId}
   * @throws dev.box.api.BoxCapacityExceededException when the server's session capacity is reached
   */
  public BoxSessionInfo fork(String sourceId, String newId) {
    return fork(sourceId, new BoxForkRequest(newId, false));
  }

  /**
   * As {@link #fork(String, String)}, with the new session persistent when {@code request} says.
   */
  public BoxSessionInfo fork(String sourceId, BoxForkRequest request) {
    String route = Routes.session(sourceId) + "/fork";
    return http.call("POST", route, request, requestTimeout(), BoxSessionInfo.class);
  }

  /**
   * Keeps an immutable copy of the session's private workspace as the snapshot {@code name}; a
   * session created with {@link BoxSpec.Builder#fromSnapshot} starts from it. It stays until {@link
   * #deleteSnapshot}, across restarts of the server.
   *
   * @throws dev.box.api.BoxSessionNotFoundException when no session has this id
   * @throws BoxValidationException when {@code name} is not a snapshot name ({@link
   *     dev.box.api.BoxSnapshot#checkName}), or the session's workspace is a host path
   * @throws dev.box.api.BoxSessionConflictException when a snapshot has this name
   * @throws dev.box.api.BoxCapacityExceededException when the server keeps {@code max_snapshots}
   */
  public BoxSnapshot snapshot(String sessionId, String name) {
    String route = Routes.session(sessionId) + "/snapshots";
    return http.call(
        "POST", route, new BoxSnapshotRequest(name), requestTimeout(), BoxSnapshot.class);
  }

  /** Every snapshot the server keeps, oldest first. */
  public List<BoxSnapshot> snapshots() {
    return http.call("GET", Routes.SNAPSHOTS, null, requestTimeout(), BoxSnapshotList.class)
        .snapshots();
  }

  /**
   * Deletes the snapshot {@code name}; the sessions started from it keep their files.
   *
   * @throws dev.box.api.BoxException ({@code not_found}) when there is no such snapshot
   */
  public void deleteSnapshot(String name) {
    http.callForNothing("DELETE", Routes.snapshot(name), requestTimeout());
  }

  /**
   * Stops the session and deletes its private workspace.
   *
   * @throws dev.box.api.BoxSessionNotFoundException when no session has this id
   * @throws BoxValidationException when {@code sessionId} is blank
   */
  public void deleteSession(String sessionId) {
    http.call("DELETE", Routes.session(sessionId), null, requestTimeout(), Map.class);
  }

  /**
   * Runs {@code spec.cmd()} in the session {@code spec} names, creating the session first if
   * needed, and waits for it to finish.
   *
   * <p>A non-zero exit code and a timeout are results, not errors: see {@link
   * BoxExecutionResult#status()}. The request may take the spec's {@code timeout_sec} plus this
   * client's request timeout before it is abandoned.
   */
  public BoxExecutionResult exec(BoxSpec spec) {
    Duration timeout = Duration.ofSeconds(spec.timeoutSec()).plus(requestTimeout());
    return http.call(
        "POST",
        Routes.session(spec.sessionId()) + "/exec",
        spec,
        timeout,
        BoxExecutionResult.class);
  }

  /**
   * Runs {@code spec.cmd()} as {@link #exec(BoxSpec)} does, and has {@code output} hear its output
   * as the command writes it, on this thread, before the result is returned. The result's {@code
   * stdout} and {@code stderr} are then empty: they came through {@code output}.
   *
   * @throws dev.box.api.BoxException an error of the exec: before the command started, the one any
   *     exec gets; after it (the sandbox ended under the command), the one the server ended the
   *     stream with
   */
  public BoxExecutionResult exec(BoxSpec spec, ExecOutput output) {
    Duration timeout = Duration.ofSeconds(spec.timeoutSec()).plus(requestTimeout());
    return new StreamedExec(http.mapper(), output)
        .read(http.streamJson("POST", Routes.session(spec.sessionId()) + "/exec", spec, timeout));
  }

  /**
   * The files of sessions: upload, download, list and delete files, and persist or hydrate a
   * directory as a tar. Bodies are streamed, never held whole in memory.
   */
  public BoxFiles files() {
    return new BoxFiles(http);
  }

  /**
   * Starts a long-running process in a session, replacing a running process with the same id (the
   * old one is stopped first). Attach to its stdio with {@link #attach}.
   *
   * @throws dev.box.api.BoxSessionNotFoundException when no session has this id (create it first)
   * @throws dev.box.api.BoxCapacityExceededException when the server runs its maximum of processes
   */
  public BoxManagedProcessInfo startProcess(String sessionId, BoxManagedProcessSpec spec) {
    return http.call(
        "POST",
        Routes.session(sessionId) + "/managed-process",
        spec,
        requestTimeout(),
        BoxManagedProcessInfo.class);
  }

  /**
   * Issues a preview link to TCP {@code port} inside session {@code sessionId}'s sandbox, valid for
   * {@code ttlSeconds}: a URL a browser opens without the control token.
   *
   * @throws dev.box.api.BoxValidationException for a port outside 1 to 65535, a lifetime out of
   *     bounds, or a backend that cannot reach a sandbox's ports
   * @throws dev.box.api.BoxSessionNotFoundException when the session does not exist
   */
  public BoxPreviewLink previewLink(String sessionId, int port, int ttlSeconds) {
    return http.call(
        "POST",
        Routes.session(sessionId) + "/ports/" + port + "/links",
        Map.of("ttl_sec", ttlSeconds),
        requestTimeout(),
        BoxPreviewLink.class);
  }

  /**
   * A managed process as the server reports it now: running or exited, with its exit code and the
   * tail of its stderr.
   *
   * @throws dev.box.api.BoxManagedProcessNotFoundException when the session has no process with
   *     this id (never started, stopped, or its exited record expired)
   */
  public BoxManagedProcessInfo process(String sessionId, String processId) {
    return http.call(
        "GET",
        Routes.process(sessionId, processId),
        null,
        requestTimeout(),
        BoxManagedProcessInfo.class);
  }

  /**
   * Stops a managed process and forgets it: closes its stdin, sends SIGTERM to its whole process
   * tree, and SIGKILL after a grace period. An attached client sees stdout end.
   *
   * @throws dev.box.api.BoxManagedProcessNotFoundException when the session has no process with
   *     this id
   */
  public void stopProcess(String sessionId, String processId) {
    http.call("DELETE", Routes.process(sessionId, processId), null, requestTimeout(), Map.class);
  }

  /**
   * Attaches {@code listener} to a managed process's stdio with the {@linkplain
   * AttachOptions#defaults() default options}: stdout lines, starting where the previous
   * attachment's delivery ended, reconnecting when the connection drops.
   *
   * @see #attach(String, String, ProcessListener, AttachOptions)
   */
  public ProcessAttachment attach(String sessionId, String processId, ProcessListener listener) {
    return attach(sessionId, processId, listener, AttachOptions.defaults());
  }

  /**
   * Attaches {@code listener} to a managed process's stdio: stdout goes to the listener, and the
   * returned attachment writes to stdin. Returns once the server accepted the connection; the
   * server relays to one client at a time, so while another client is attached, stdout starts (and
   * sent lines reach stdin) only when that one detaches.
   *
   * <p>When the connection drops, the attachment reconnects and resumes at the byte after the last
   * one delivered (see {@link AttachOptions#reconnectAttempts()}). The process keeps running when
   * the attachment ends.
   *
   * <p>The JDK's WebSocket finishes its opening handshake on {@link
   * java.util.concurrent.ForkJoinPool#commonPool()}: while every thread of that pool is blocked
   * (for example by blocking calls inside {@code CompletableFuture.supplyAsync} without an
   * executor, on a machine with few cores), connecting and reconnecting wait for one to be free.
   *
   * @throws dev.box.api.BoxManagedProcessNotFoundException when the session has no process with
   *     this id
   * @throws dev.box.api.BoxManagedProcessConflictException when the process exited and all of its
   *     stdout was delivered
   * @throws BoxRuntimeUnavailableException when the server cannot be reached
   */
  public ProcessAttachment attach(
      String sessionId, String processId, ProcessListener listener, AttachOptions options) {
    Routes.process(sessionId, processId); // Validates before connecting.
    return RelayAttachment.open(this, sessionId.strip(), processId.strip(), listener, options);
  }

  /**
   * Opens a terminal in session {@code sessionId}: a login shell (bash when the sandbox has it,
   * else sh) on a pseudo-terminal of {@code cols} by {@code rows} in the sandbox, whose output goes
   * to {@code output}. Returns once the shell has started. Closing the terminal, or the shell's
   * exit, ends the shell's whole tree.
   *
   * @throws dev.box.api.BoxValidationException when a size is outside 1 to 1000, or the session's
   *     backend has no terminals
   * @throws dev.box.api.BoxSessionNotFoundException when the session does not exist
   * @throws BoxRuntimeUnavailableException when the server cannot be reached
   */
  public Terminal terminal(String sessionId, int cols, int rows, TerminalOutput output) {
    return Terminal.open(http, Routes.terminal(sessionId, cols, rows), output);
  }

  /**
   * Detaches every attachment still open (their processes keep running), then releases the
   * connections; requests in flight complete first.
   */
  @Override
  public void close() {
    // The JDK's HttpClient.close() waits for open WebSockets to end.
    List.copyOf(attachments).forEach(ProcessAttachment::close);
    http.close();
  }

  /** {@code attachment} is open: {@link #close()} detaches it. */
  void opened(ProcessAttachment attachment) {
    attachments.add(attachment);
  }

  /** {@code attachment} has ended. */
  void ended(ProcessAttachment attachment) {
    attachments.remove(attachment);
  }

  /** The time a request, a connection or a detach may take. */
  Duration requestTimeout() {
    return http.requestTimeout();
  }

  /** The HTTP this client sends with, which attachments open their connections on. */
  ServerHttp http() {
    return http;
  }

  /** What attachments measure silence by. */
  Ticker ticker() {
    return ticker;
  }

  /** What attachments wait on between reconnect attempts. */
  Sleeper sleeper() {
    return sleeper;
  }

  /** Builds a {@link BoxClient}; the settings are checked as they are set. */
  public static final class Builder {
    private final URI baseUri;
    private @Nullable String controlToken;
    private Duration requestTimeout = DEFAULT_REQUEST_TIMEOUT;
    private @Nullable Ticker ticker;
    private @Nullable Sleeper sleeper;

    private Builder(URI baseUri) {
      String scheme = baseUri.getScheme();
      if (scheme == null
          || !(scheme.equalsIgnoreCase("http") || scheme.equalsIgnoreCase("https"))
          || baseUri.getHost() == null
          || baseUri.getRawQuery() != null
          || baseUri.getRawFragment() != null) {
        throw new IllegalArgumentException(
            "the Box URL must be an http or https URL with a host and no query, not '%s'"
                .formatted(baseUri));
      }
      this.baseUri = baseUri;
    }

    /**
     * Sends {@code token} as {@code Authorization: Bearer <token>} on every request; null or blank
     * sends none. Surrounding whitespace is ignored, as the server ignores it.
     *
     * @throws IllegalArgumentException when the token contains control characters
     */
    public Builder controlToken(@Nullable String token) {
      if (token == null || token.isBlank()) {
        controlToken = null;
        return this;
      }
      String stripped = token.strip();
      if (stripped.chars().anyMatch(c -> c < 0x20 || c == 0x7f)) {
        throw new IllegalArgumentException("the control token must not contain control characters");
      }
      controlToken = stripped;
      return this;
    }

    /**
     * Sends the token held in {@code dataDir}'s control-token file ({@link BoxDataDir#TOKEN_FILE}),
     * which a server started on that data directory without a configured token generates. The file
     * is read now, once; it is readable only by the server's user.
     *
     * @throws IllegalArgumentException when the file does not exist, cannot be read or holds no
     *     token; the message names the file, never its content
     */
    public Builder controlTokenFrom(Path dataDir) {
      return controlToken(TokenDiscovery.fromDataDir(dataDir));
    }

    /**
     * Finds the control token in the process environment, as {@link #discoverControlToken(Map)}
     * does.
     */
    public Builder discoverControlToken() {
      return discoverControlToken(System.getenv());
    }

    /**
     * Finds the control token as the {@code box} command does, in this order: {@code
     * BOX_CONTROL_TOKEN}; else the control-token file of the data directory {@code BOX_DATA_DIR};
     * else, only when the server's address is on loopback (so that the token of this machine's
     * server never goes elsewhere), the control-token file of the default data directory ({@link
     * BoxDataDir#DEFAULT}, relative to the working directory). A file that does not exist is
     * skipped; when nothing is found no token is sent.
     *
     * @param env the environment to read: {@code System.getenv()}, or values given another way
     * @throws IllegalArgumentException when a file exists but cannot be read or holds no token
     */
    public Builder discoverControlToken(Map<String, String> env) {
      String token = TokenDiscovery.discover(env, baseUri);
      return token == null ? this : controlToken(token);
    }

    /**
     * Sets how long connecting and each request may take; {@link BoxClient#exec} adds the spec's
     * {@code timeout_sec} to it.
     *
     * @throws IllegalArgumentException when {@code timeout} is zero or negative
     */
    public Builder requestTimeout(Duration timeout) {
      if (timeout.isNegative() || timeout.isZero()) {
        throw new IllegalArgumentException("the request timeout must be positive, not " + timeout);
      }
      requestTimeout = timeout;
      return this;
    }

    /** Lets attachments read {@code ticker} and wait on {@code sleeper} (tests give fakes). */
    Builder time(Ticker ticker, Sleeper sleeper) {
      this.ticker = ticker;
      this.sleeper = sleeper;
      return this;
    }

    /** A client with these settings, on this JVM's ticker and sleep unless given others. */
    public BoxClient build() {
      return new BoxClient(
          baseUri,
          controlToken,
          requestTimeout,
          ticker != null ? ticker : Ticker.system(),
          sleeper != null ? sleeper : Sleeper.system());
    }
  }
}
