package dev.box.agenthost;

import dev.box.api.BoxException;
import dev.box.api.BoxExecutionResult;
import dev.box.api.BoxProfile;
import dev.box.api.BoxRuntimeStatus;
import dev.box.api.BoxRuntimeUnavailableException;
import dev.box.api.BoxSpec;
import dev.box.client.BoxClient;
import dev.box.client.Sleeper;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What an agent needs around a {@link BoxClient}, as LangBot's Box service gives it to LangBot:
 *
 * <ul>
 *   <li>availability: a heartbeat, and reconnecting with backoff ({@link Availability}); {@link
 *       #available()} and {@link #status()};
 *   <li>session ids from a template per conversation, user or agent ({@link SessionIdTemplate}),
 *       where an operator's forced template wins over the caller's;
 *   <li>a profile applied to every exec, with its locked fields and timeout clamp ({@link
 *       ProfileRules});
 *   <li>output cut for a model ({@link OutputCut}) in {@link ExecToolResult};
 *   <li>an advisory workspace quota checked around each exec ({@link AdvisoryWorkspaceQuota});
 *   <li>the recent errors ({@link ErrorRing});
 *   <li>stdio MCP servers launched in a sandbox ({@link #mcp()}).
 * </ul>
 *
 * <p>{@link #start()} starts the heartbeat on a virtual thread; {@link #close()} stops it (the
 * client stays open: it belongs to the caller). Thread-safe.
 *
 * <pre>{@code
 * try (AgentHost host = AgentHost.builder(client).profile("offline_readonly").build().start()) {
 *   ExecToolResult out = host.exec(SessionContext.of("person", "alice", "alice"), ExecRequest.of("ls"));
 * }
 * }</pre>
 */
public final class AgentHost implements AutoCloseable {
  private final BoxClient client;
  private final BoxProfile profile;
  private final @Nullable String forcedTemplate;
  private final @Nullable String image;
  private final @Nullable Path workspace;
  private final @Nullable Integer workspaceQuotaMb;
  private final int outputLimit;
  private final AdvisoryWorkspaceQuota quota;
  private final ErrorRing errors;
  private final Availability availability;
  private final Sleeper sleeper;
  private @Nullable Thread monitor;

  private AgentHost(Builder b, Sleeper sleeper, Clock clock) {
    this.client = b.client;
    this.profile = b.profile;
    this.forcedTemplate = b.forcedTemplate;
    this.image = b.image;
    this.workspace = b.workspace;
    this.workspaceQuotaMb = b.workspaceQuotaMb;
    this.outputLimit = b.outputLimit;
    this.quota = new AdvisoryWorkspaceQuota(b.maxWorkspaceEntries);
    this.errors = new ErrorRing(b.errorCapacity, clock);
    this.sleeper = sleeper;
    this.availability =
        new Availability(
            client::health,
            sleeper,
            b.backoff,
            new Availability.Listener() {
              @Override
              public void disconnected(String reason) {
                errors.record("disconnected", reason, null);
              }
            });
  }

  /** A builder of an agent host on {@code client}, with the {@code default} profile. */
  public static Builder builder(BoxClient client) {
    return new Builder(client);
  }

  /**
   * Probes the server once, then starts the heartbeat and reconnect loop on a virtual thread.
   *
   * @return this host
   */
  public synchronized AgentHost start() {
    if (monitor == null) {
      availability.probeNow();
      monitor = Thread.ofVirtual().name("box-agent-host-heartbeat").start(availability::run);
    }
    return this;
  }

  /** The client this host sends requests with. */
  public BoxClient client() {
    return client;
  }

  /** The profile applied to every exec. */
  public BoxProfile profile() {
    return profile;
  }

  /** The host directory mounted as every session's workspace, or null for private workspaces. */
  public @Nullable Path workspace() {
    return workspace;
  }

  /** What waits between retries and polls (a fake in tests). */
  Sleeper sleeper() {
    return sleeper;
  }

  /** Whether the server is connected and its backend can run sandboxes. */
  public boolean available() {
    return availability.available();
  }

  /** The availability this host keeps, to probe now or read the backend's health. */
  public Availability availability() {
    return availability;
  }

  /** The recent errors. */
  public ErrorRing errors() {
    return errors;
  }

  /**
   * The status: availability, profile, recent errors and, when the server answers, its own status.
   * Never throws: a failing status request becomes the connector error.
   */
  public AgentHostStatus status() {
    String connectorError = availability.connectorError();
    BoxRuntimeStatus runtime = null;
    if (availability.connected()) {
      try {
        runtime = client.status();
      } catch (BoxException e) {
        connectorError = e.getMessage();
      }
    }
    List<ErrorRing.Entry> recent = errors.recent();
    return new AgentHostStatus(
        available(), profile.name(), recent.size(), recent, connectorError, runtime);
  }

  /**
   * The session id for {@code context}: rendered from the operator's forced template when one is
   * set, else from {@code template}, else per conversation.
   */
  public String sessionId(SessionContext context, @Nullable String template) {
    return SessionIdTemplate.resolve(forcedTemplate, template, context);
  }

  /**
   * The spec an exec of {@code request} in {@code sessionId} sends: the host's workspace, image and
   * quota where the request names none, then the profile ({@link ProfileRules}).
   *
   * @throws dev.box.api.BoxValidationException when a field is invalid
   */
  public BoxSpec spec(String sessionId, ExecRequest request) {
    SandboxSettings asked = request.sandbox();
    SandboxSettings.Builder own = asked.toBuilder();
    if (asked.hostPath() == null && workspace != null) {
      own.hostPath(workspace.toString());
    }
    if (asked.image() == null && image != null) {
      own.image(image);
    }
    if (workspaceQuotaMb != null) {
      own.workspaceQuotaMb(workspaceQuotaMb);
    }
    ExecRequest r = ProfileRules.apply(profile, request.toBuilder().sandbox(own.build()).build());
    BoxSpec.Builder spec =
        r.sandbox()
            .applyTo(BoxSpec.builder(sessionId))
            .cmd(r.command())
            .env(r.env())
            .timeoutSec(Objects.requireNonNull(r.timeoutSec()));
    if (r.workdir() != null && !r.workdir().isBlank()) {
      spec.workdir(r.workdir());
    }
    return spec.build();
  }

  /** Runs {@code request} in the session {@code context} names under {@code template}. */
  public ExecToolResult exec(
      SessionContext context, @Nullable String template, ExecRequest request) {
    return exec(sessionId(context, template), request);
  }

  /** Runs {@code request} in the session of {@code context}, per conversation unless forced. */
  public ExecToolResult exec(SessionContext context, ExecRequest request) {
    return exec(context, null, request);
  }

  /**
   * Runs {@code request} in the session {@code sessionId}, creating it if needed, as the reference
   * does: refuses while Box is unavailable, builds the spec, checks the workspace quota before the
   * exec and after it (deleting the session when the exec outgrew it), and cuts the output for a
   * model. A non-zero exit code and a timeout are outcomes; every failure is recorded in {@link
   * #errors()} and thrown.
   *
   * @throws BoxRuntimeUnavailableException when Box is not available
   * @throws dev.box.api.BoxValidationException when the request is invalid or the quota exceeded
   */
  public ExecToolResult exec(String sessionId, ExecRequest request) {
    try {
      if (!available()) {
        throw new BoxRuntimeUnavailableException(
            "Box runtime is not available: "
                + Objects.requireNonNullElse(availability.connectorError(), "unknown reason"));
      }
      BoxSpec spec = spec(sessionId, request);
      Path hostPath = spec.hostPath() == null ? null : Path.of(spec.hostPath());
      if (hostPath != null) {
        quota.check(hostPath, spec.workspaceQuotaMb(), "before execution", sessionId);
      }
      BoxExecutionResult result = client.exec(spec);
      if (hostPath != null) {
        try {
          quota.check(hostPath, spec.workspaceQuotaMb(), "after execution", sessionId);
        } catch (BoxException e) {
          deleteQuietly(sessionId);
          throw e;
        }
      }
      return ExecToolResult.of(result, outputLimit);
    } catch (RuntimeException e) {
      errors.record(e, sessionId);
      throw e;
    }
  }

  /** The files of this host's sessions, read and written for a model. */
  public AgentFiles files() {
    return new AgentFiles(this);
  }

  /** How many characters of each stream or file a model sees. */
  int outputLimit() {
    return outputLimit;
  }

  /** The launcher of stdio MCP servers in sandboxes of this host. */
  public McpLauncher mcp() {
    return new McpLauncher(this);
  }

  private void deleteQuietly(String sessionId) {
    try {
      client.deleteSession(sessionId);
    } catch (BoxException e) {
      errors.record(e, sessionId);
    }
  }

  /** Stops the heartbeat; the client stays open. */
  @Override
  public synchronized void close() {
    if (monitor != null) {
      monitor.interrupt();
      monitor = null;
    }
  }

  /** Builds an {@link AgentHost}; settings are checked as they are set. */
  public static final class Builder {
    private final BoxClient client;
    private BoxProfile profile = BoxProfile.named("default");
    private @Nullable String forcedTemplate;
    private @Nullable String image;
    private @Nullable Path workspace;
    private @Nullable Integer workspaceQuotaMb;
    private int outputLimit = OutputCut.DEFAULT_LIMIT;
    private int maxWorkspaceEntries = AdvisoryWorkspaceQuota.DEFAULT_MAX_ENTRIES;
    private int errorCapacity = ErrorRing.DEFAULT_CAPACITY;
    private Backoff backoff = Backoff.RECONNECT;
    private @Nullable Sleeper sleeper;
    private @Nullable Clock clock;

    private Builder(BoxClient client) {
      this.client = client;
    }

    /**
     * Applies the built-in profile {@code name} to every exec.
     *
     * @throws dev.box.api.BoxValidationException for an unknown name, listing the known ones
     */
    public Builder profile(String name) {
      profile = BoxProfile.named(name);
      return this;
    }

    /** Applies {@code value} to every exec. */
    public Builder profile(BoxProfile value) {
      profile = value;
      return this;
    }

    /**
     * An operator's session id template that wins over every caller's (the reference's {@code
     * force_box_session_id_template}), for example {@link SessionIdTemplate#GLOBAL}; null or blank
     * for none.
     */
    public Builder forcedSessionTemplate(@Nullable String template) {
      forcedTemplate = template;
      return this;
    }

    /** The image used when a request names none, instead of the profile's. */
    public Builder image(@Nullable String value) {
      image = value;
      return this;
    }

    /**
     * The host directory mounted at {@code /workspace} of every session whose request names no host
     * path (the reference's default workspace); it must be under the server's allowed mount roots.
     * MCP servers are staged under it. Null (the default) gives each session a private workspace.
     */
    public Builder workspace(@Nullable Path dir) {
      workspace = dir == null ? null : dir.toAbsolutePath().normalize();
      return this;
    }

    /**
     * The workspace quota in MiB for every exec instead of the profile's; null for the profile's.
     */
    public Builder workspaceQuotaMb(@Nullable Integer mb) {
      if (mb != null && mb < 0) {
        throw new IllegalArgumentException("the workspace quota must not be negative");
      }
      workspaceQuotaMb = mb;
      return this;
    }

    /** How many characters of each stream a model sees (default 4,000). */
    public Builder outputLimit(int chars) {
      if (chars < 100) {
        throw new IllegalArgumentException("the output limit must be at least 100 characters");
      }
      outputLimit = chars;
      return this;
    }

    /** The most entries a quota scan walks (default 100,000; clamped to 1..1,000,000). */
    public Builder maxWorkspaceEntries(int entries) {
      maxWorkspaceEntries = entries;
      return this;
    }

    /** How many recent errors the status keeps (default 50). */
    public Builder errorCapacity(int entries) {
      if (entries < 1) {
        throw new IllegalArgumentException("the error capacity must be positive");
      }
      errorCapacity = entries;
      return this;
    }

    /** The reconnect backoff (default 3 s doubling to 60 s). */
    public Builder backoff(Backoff value) {
      backoff = value;
      return this;
    }

    /** What the heartbeat, reconnects and MCP retries wait on; tests give a fake. */
    public Builder sleeper(Sleeper value) {
      sleeper = value;
      return this;
    }

    /** What stamps recorded errors. */
    public Builder clock(Clock value) {
      clock = value;
      return this;
    }

    /**
     * The agent host, on this JVM's sleep and UTC clock unless given others; call {@link
     * AgentHost#start()} to connect.
     */
    public AgentHost build() {
      return new AgentHost(
          this,
          sleeper != null ? sleeper : Sleeper.system(),
          clock != null ? clock : Clock.systemUTC());
    }
  }
}
