package dev.box.server;

import dev.box.api.time.Ticker;
import dev.box.core.RuntimeConfig;
import dev.box.core.backend.BackendChoice;
import dev.box.core.backend.BackendStatus;
import dev.box.core.backend.CgroupMigrations;
import dev.box.core.backend.SandboxBackend;
import dev.box.core.exec.ExecRunner;
import dev.box.core.session.SessionListener;
import dev.box.core.session.SessionManager;
import dev.box.langbot.ControlAuth;
import dev.box.langbot.LangBotControl;
import dev.box.server.http.HttpApi;
import dev.box.server.http.HttpMount;
import dev.box.server.metrics.BoxMetrics;
import io.javalin.Javalin;
import java.io.IOException;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
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
  private final SandboxBackend backend;
  private final SessionManager sessions;
  private final ScheduledExecutorService reaper;
  private final ExecutorService pumps;
  private final Javalin http;
  private final LangBotControl langbot;
  private final ApiAccess access;
  private final FileChannel lockChannel;
  private final FileLock lock;
  private final CgroupMigrations migrations;
  private final boolean listening;
  private final AtomicBoolean closed = new AtomicBoolean();

  private BoxServer(
      ServerConfig config,
      SandboxBackend backend,
      SessionManager sessions,
      ScheduledExecutorService reaper,
      ExecutorService pumps,
      Javalin http,
      LangBotControl langbot,
      ApiAccess access,
      FileChannel lockChannel,
      FileLock lock,
      CgroupMigrations migrations,
      boolean listening) {
    this.migrations = migrations;
    this.langbot = langbot;
    this.listening = listening;
    this.access = access;
    this.config = config;
    this.backend = backend;
    this.sessions = sessions;
    this.reaper = reaper;
    this.pumps = pumps;
    this.http = http;
    this.lockChannel = lockChannel;
    this.lock = lock;
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
    FileChannel channel = null;
    FileLock lock = null;
    SandboxBackend backend = null;
    SessionManager sessions = null;
    ScheduledExecutorService reaper = null;
    ExecutorService pumps = null;
    try {
      Path state = StateDir.prepare(config.dataDir());
      channel =
          FileChannel.open(
              state.resolve("box.lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
      try {
        lock = channel.tryLock();
      } catch (java.nio.channels.OverlappingFileLockException e) {
        lock = null; // held by another server in this JVM
      }
      if (lock == null) {
        throw new IllegalStateException(
            "data dir " + config.dataDir() + " is in use by another Box server");
      }
      ApiAccess access = ApiAccess.decide(config, langbotToken);
      String instanceId =
          HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong()).substring(0, 12);
      // Before the backends: the pool's first sandboxes start with cheap cgroup moves too.
      CgroupMigrations migrations =
          CgroupMigrations.favorMoves(
              CgroupMigrations.HOST_MOUNT, config.isolation().favorDynmods());
      BackendChoice selection = Backends.open(config.backend(), config, instanceId);
      backend = selection.backend();
      RuntimeConfig runtime =
          new RuntimeConfig(
              state,
              config.sessionTtl(),
              config.maxSessions(),
              config.maxOutputBytes(),
              config.allowedMountRoots(),
              config.processLimits(),
              config.fileLimits());
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
              metrics != null ? metrics : SessionListener.NONE);
      if (metrics != null) {
        metrics.bind(sessions);
      }
      if (!config.backendFixed()) {
        sessions.allowBackendSwitch(name -> Backends.forLangBot(name, config, instanceId));
      }
      sessions.removeOrphans();
      sessions.restorePersistent();
      reaper = startReaper(sessions, config.sessionTtl());
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
              mounts);
      boolean listening = true;
      try {
        startListening(http, config);
      } catch (IllegalStateException e) {
        if (!stdioControl) {
          throw e;
        }
        listening = false;
        log.warn("{}. Managed process WebSocket attach will be unavailable.", e.getMessage());
      }
      BoxServer server =
          new BoxServer(
              config,
              backend,
              sessions,
              reaper,
              pumps,
              http,
              langbot,
              access,
              channel,
              lock,
              migrations,
              listening);
      server.logStartup(selection);
      return server;
    } catch (IOException e) {
      cleanUp(sessions, reaper, pumps, backend, lock, channel);
      throw new IllegalStateException("cannot start Box: " + e.getMessage(), e);
    } catch (RuntimeException e) {
      cleanUp(sessions, reaper, pumps, backend, lock, channel);
      throw e;
    }
  }

  private static void startListening(Javalin http, ServerConfig config) {
    try {
      http.start(config.host(), config.port());
    } catch (RuntimeException e) {
      for (Throwable t = e; t != null; t = t.getCause()) {
        if (t instanceof java.net.BindException bind) {
          throw new IllegalStateException(
              "cannot listen on " + config.host() + ":" + config.port() + ": " + bind.getMessage(),
              e);
        }
      }
      throw e;
    }
  }

  private static final long GRANT_REAP_SECONDS = 5;

  private static ScheduledExecutorService startReaper(SessionManager sessions, Duration ttl) {
    ScheduledExecutorService reaper =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "box-session-reaper");
              t.setDaemon(true);
              return t;
            });
    long period = ttl.isZero() ? 30 : Math.max(1, Math.min(30, ttl.toSeconds()));
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
    return reaper;
  }

  private void logStartup(BackendChoice selection) {
    BackendStatus status = sessions.backendStatus();
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
        access.description(),
        status.name(),
        status.available() ? "available" : "UNAVAILABLE: " + status.reason(),
        selection.why(),
        limits,
        migrations.state(),
        others.isEmpty() ? "" : " not chosen: " + others);
    if (!access.tokens().required()) {
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
    return http.port();
  }

  /**
   * The token a client must present: the configured one, else LangBot's, else the one generated in
   * {@code <data dir>/control-token}; null when the API is open ({@code insecure} without a token).
   * For clients in this JVM, such as tests; never log it.
   */
  public @Nullable String controlToken() {
    return access.token();
  }

  /**
   * Where a client on this host reaches the server: its bound address, or loopback when it is bound
   * to every address; null when it does not listen (stdio control whose port could not be bound).
   */
  public @Nullable URI localUri() {
    if (!listening) {
      return null;
    }
    String host = config.host();
    if (host.isBlank() || host.equals("0.0.0.0") || host.equals("::") || host.equals("[::]")) {
      host = "127.0.0.1";
    } else if (host.contains(":") && !host.startsWith("[")) {
      host = "[" + host + "]";
    }
    return URI.create("http://" + host + ":" + port());
  }

  /** LangBot's control plane of this server, for the stdio channel. */
  public LangBotControl langbot() {
    return langbot;
  }

  /** The sessions this server serves. */
  SessionManager sessions() {
    return sessions;
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
    log.info("Box shutting down: stopping {} sessions", sessions.size());
    http.stop();
    cleanUp(sessions, reaper, pumps, backend, lock, lockChannel);
    log.info("Box stopped");
  }

  private static void cleanUp(
      @Nullable SessionManager sessions,
      @Nullable ScheduledExecutorService reaper,
      @Nullable ExecutorService pumps,
      @Nullable SandboxBackend backend,
      @Nullable FileLock lock,
      @Nullable FileChannel channel) {
    if (reaper != null) {
      reaper.shutdownNow();
    }
    if (sessions != null) {
      sessions.close();
      // LangBot's box_init may have replaced the backend the server started with.
      sessions.backendChoice().backend().close();
    } else if (backend != null) {
      backend.close();
    }
    if (pumps != null) {
      pumps.shutdownNow();
    }
    try {
      if (lock != null) {
        lock.release();
      }
      if (channel != null) {
        channel.close();
      }
    } catch (IOException e) {
      log.debug("releasing the data dir lock failed", e);
    }
  }
}
