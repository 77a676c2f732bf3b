package dev.box.server;

import dev.box.api.time.Ticker;
import dev.box.core.RuntimeConfig;
import dev.box.core.backend.BackendChoice;
import dev.box.core.backend.BackendStatus;
import dev.box.core.backend.CgroupMigrations;
import dev.box.core.backend.Foreground;
import dev.box.core.backend.SandboxBackend;
import dev.box.core.backend.SharedSessions;
import dev.box.core.exec.ExecRunner;
import dev.box.core.session.SessionListener;
import dev.box.core.session.SessionManager;
import dev.box.langbot.ControlAuth;
import dev.box.langbot.LangBotControl;
import dev.box.server.http.HttpApi;
import dev.box.server.http.HttpMount;
import dev.box.server.metrics.BoxMetrics;
import dev.box.server.ports.PreviewLinks;
import io.javalin.Javalin;
import java.io.IOException;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running Box server: the backend, the sessions, the idle reaper and the HTTP API on one port.
 * Several servers can run in one JVM (each with its own data directory).
 */
public final class BoxServer implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(BoxServer.class);

  /** The version of this build. */
  public static final String VERSION = "0.1.0";

  private final ServerConfig config;
  private final HttpEndpoint endpoint;
  private final ServerResources resources;
  private final AtomicBoolean closed = new AtomicBoolean();

  private BoxServer(ServerConfig config, HttpEndpoint endpoint, ServerResources resources) {
    this.config = config;
    this.endpoint = endpoint;
    this.resources = resources;
  }

  /**
   * Starts a server and returns once it accepts requests.
   *
   * <p>Unless a token is configured or {@code insecure} is set, the server requires the token it
   * generates in {@code <data dir>/control-token} (see {@link #controlToken()}).
   *
   * @throws IllegalArgumentException when the configuration is refused, with a message for the user
   * @throws IllegalStateException when the data directory is in use, its control-token file is
   *     refused, or the port cannot be bound
   */
  public static BoxServer start(ServerConfig config) {
    return start(config, Clock.systemUTC());
  }

  /** Starts a server whose sessions read time from {@code clock}. */
  public static BoxServer start(ServerConfig config, Clock clock) {
    return start(config, clock, Map.of(), false);
  }

  /**
   * Starts a server that also serves LangBot's control plane as configured by {@code langbotEnv}
   * ({@code LANGBOT_BOX_CONTROL_TOKEN}, {@code LANGBOT_BOX_TRUSTED_INSTANCE_UUID}).
   *
   * @param stdioControl whether the control channel will run over stdio: the trusted instance is
   *     then required, and a port that cannot be bound is only a warning
   */
  public static BoxServer start(
      ServerConfig config, Clock clock, Map<String, String> langbotEnv, boolean stdioControl) {
    return start(config, clock, langbotEnv, stdioControl, List.of());
  }

  /**
   * Starts a server as {@link #start(ServerConfig, Clock, Map, boolean)} does, with {@code mounts}
   * served on its port behind the control token (see {@link HttpMount}).
   */
  public static BoxServer start(
      ServerConfig config,
      Clock clock,
      Map<String, String> langbotEnv,
      boolean stdioControl,
      List<HttpMount> mounts) {
    String langbotToken = ControlAuth.langbotToken(langbotEnv);
    DataDirLock lock = null;
    SandboxBackend backend = null;
    SessionManager sessions = null;
    ScheduledExecutorService reaper = null;
    ExecutorService pumps = null;
    try {
      Path state = StateDir.prepare(config.dataDir());
      lock = DataDirLock.open(state, config.dataDir());
      ApiAccess access = ApiAccess.decide(config, langbotToken);
      String instanceId =
          HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong()).substring(0, 12);
      // Before the backends: the pool's first sandboxes start with cheap cgroup moves too.
      CgroupMigrations migrations =
          CgroupMigrations.favorMoves(
              CgroupMigrations.HOST_MOUNT, config.isolation().favorDynmods());
      // The creates and execs under way, which the backend's and the store's work that nobody
      // waits for (a pool's refill, spare workspaces) defers to.
      Foreground foreground = new Foreground();
      BackendChoice selection = Backends.open(config.backend(), config, instanceId, foreground);
      backend = selection.backend();
      RuntimeConfig runtime =
          new RuntimeConfig(
              state,
              config.sessionTtl(),
              config.maxSessions(),
              config.maxOutputBytes(),
              config.allowedMountRoots(),
              config.processLimits(),
              config.fileLimits(),
              config.pausedSessionTtl(),
              config.storeLimits());
      BoxMetrics metrics = config.metrics().enabled() ? new BoxMetrics() : null;
      pumps = ExecRunner.newPumpPool();
      sessions =
          new SessionManager(
              selection,
              runtime,
              clock,
              Ticker.system(),
              pumps,
              instanceId,
              metrics != null ? metrics : SessionListener.NONE,
              foreground);
      if (metrics != null) {
        metrics.bind(sessions);
      }
      if (!config.backendFixed()) {
        sessions.allowBackendSwitch(
            name -> Backends.forLangBot(name, config, instanceId, foreground));
      }
      sessions.removeOrphans();
      sessions.restorePersistent();
      reaper = startReaper(sessions, config.sessionTtl(), config.pausedSessionTtl());
      LangBotControl langbot =
          LangBotControl.fromEnvironment(
              sessions, langbotEnv, access.tokens(), stdioControl, config.dataDir());
      // Grants live at most minutes (max_grant_ttl_sec): their expiry is checked every few
      // seconds, so an expired Workspace's sandbox does not outlive it by more than that.
      reaper.scheduleWithFixedDelay(
          () -> {
            try {
              langbot.reapExpiredGrants();
            } catch (RuntimeException e) {
              log.warn("admission grant reaper failed; it keeps running", e);
            }
          },
          GRANT_REAP_SECONDS,
          GRANT_REAP_SECONDS,
          TimeUnit.SECONDS);
      Javalin http =
          HttpApi.create(
              sessions,
              access.tokens(),
              VERSION,
              langbot,
              metrics,
              config.metrics().open(),
              mounts,
              access.token(),
              PreviewLinks.open(config.stateDir(), clock, config.publicUrl()));
      HttpEndpoint endpoint = HttpEndpoint.listen(http, access, config, stdioControl);
      advertise(sessions, config, endpoint);
      BoxServer server =
          new BoxServer(
              config, endpoint, new ServerResources(sessions, langbot, reaper, pumps, lock));
      server.logStartup(selection, migrations);
      return server;
    } catch (IOException e) {
      ServerResources.release(sessions, reaper, pumps, backend, lock);
      throw new IllegalStateException("cannot start Box: " + e.getMessage(), e);
    } catch (RuntimeException e) {
      ServerResources.release(sessions, reaper, pumps, backend, lock);
      throw e;
    }
  }

  private static final long GRANT_REAP_SECONDS = 5;

  /**
   * Tells the other replicas, where the backend shares its sessions, where they reach this server:
   * {@code replica_url}, else the bound URL when it is a loopback address (replicas on one host).
   * Bound elsewhere without it, none: the others cannot reach the managed processes this one
   * starts, and health says so.
   */
  private static void advertise(
      SessionManager sessions, ServerConfig config, HttpEndpoint endpoint) {
    SharedSessions shared = sessions.sharedSessions();
    if (shared == null) {
      return;
    }
    URI url = config.replicaUrl();
    if (url == null && isLoopback(config.host())) {
      url = endpoint.localUri();
    }
    if (url == null) {
      log.warn(
          "replica_url is not set: the other replicas cannot reach the managed processes this one"
              + " starts");
      return;
    }
    try {
      shared.advertise(url);
    } catch (RuntimeException e) {
      log.warn("cannot advertise replica_url now; the next lease renewal does: {}", e.toString());
    }
  }

  /** How often a TTL is checked, in seconds: as often as it is long, at most every 30 s. */
  private static long checkEvery(Duration ttl) {
    return ttl.isZero() ? 30 : ttl.toSeconds();
  }

  private static ScheduledExecutorService startReaper(
      SessionManager sessions, Duration ttl, Duration pausedTtl) {
    ScheduledExecutorService reaper =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "box-session-reaper");
              t.setDaemon(true);
              return t;
            });
    long period = Math.max(1, Math.min(30, Math.min(checkEvery(ttl), checkEvery(pausedTtl))));
    reaper.scheduleWithFixedDelay(
        () -> {
          try {
            sessions.reapIdle();
            sessions.processes().reapCompleted();
          } catch (RuntimeException e) {
            log.warn("session reaper failed; it keeps running", e);
          }
        },
        period,
        period,
        TimeUnit.SECONDS);
    Duration renewEvery = sessions.renewSharedEvery();
    if (renewEvery != null) {
      reaper.scheduleWithFixedDelay(
          () -> {
            try {
              sessions.renewShared();
            } catch (RuntimeException e) {
              log.warn("renewing the sessions' lease failed; it is tried again: {}", e.toString());
            }
          },
          0,
          renewEvery.toMillis(),
          TimeUnit.MILLISECONDS);
    }
    return reaper;
  }

  private void logStartup(BackendChoice selection, CgroupMigrations migrations) {
    BackendStatus status = resources.sessions().backendStatus();
    String limits =
        status.enforced().entrySet().stream()
            .sorted(Map.Entry.comparingByKey())
            .map(e -> e.getKey() + "=" + e.getValue())
            .collect(Collectors.joining(" "));
    String others =
        selection.notChosen().entrySet().stream()
            .map(e -> e.getKey() + ": " + e.getValue())
            .collect(Collectors.joining("; "));
    log.info(
        "Box {} listening on http://{}:{}, API protected by {}; backend={} ({}; {}) enforced: {}"
            + " cgroup_moves={}{}",
        VERSION,
        config.host(),
        port(),
        endpoint.access().description(),
        status.name(),
        status.available() ? "available" : "UNAVAILABLE: " + status.reason(),
        selection.why(),
        limits,
        migrations.state(),
        others.isEmpty() ? "" : " not chosen: " + others);
    if (!endpoint.access().tokens().required()) {
      log.warn(
          "the API is OPEN (--insecure): anything that reaches {}:{}{} can run code and mount host"
              + " paths read-write as this server's user",
          config.host(),
          port(),
          isLoopback(config.host()) ? " (any local process)" : " (the network)");
    }
  }

  private static boolean isLoopback(String host) {
    try {
      return InetAddress.getByName(host).isLoopbackAddress();
    } catch (UnknownHostException e) {
      return false;
    }
  }

  /** The port the server listens on. */
  public int port() {
    return endpoint.port();
  }

  /**
   * The token a client must present: the configured one, else LangBot's, else the one generated in
   * {@code <data dir>/control-token}; null when the API is open ({@code insecure} without a token).
   * For clients in this JVM, such as tests; never log it.
   */
  public @Nullable String controlToken() {
    return endpoint.access().token();
  }

  /**
   * Where a client on this host reaches the server: its bound address, or loopback when it is bound
   * to every address; null when it does not listen (stdio control whose port could not be bound).
   */
  public @Nullable URI localUri() {
    return endpoint.localUri();
  }

  /** LangBot's control plane of this server, for the stdio channel. */
  public LangBotControl langbot() {
    return resources.langbot();
  }

  /** The sessions this server serves. */
  SessionManager sessions() {
    return resources.sessions();
  }

  /** The server's settings. */
  public ServerConfig config() {
    return config;
  }

  /** Stops accepting requests, stops every session and releases the data directory. */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    log.info("Box shutting down: stopping {} sessions", resources.sessions().size());
    endpoint.stop();
    resources.close();
    log.info("Box stopped");
  }
}
