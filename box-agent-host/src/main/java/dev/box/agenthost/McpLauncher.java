package dev.box.agenthost;

import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.BoxExecutionResult;
import dev.box.api.BoxManagedProcessInfo;
import dev.box.api.BoxManagedProcessNotFoundException;
import dev.box.api.BoxManagedProcessSpec;
import dev.box.api.BoxManagedProcessStatus;
import dev.box.api.BoxRuntimeUnavailableException;
import dev.box.api.BoxSpec;
import dev.box.api.BoxValidationException;
import dev.box.api.internal.ShellScript;
import dev.box.client.BoxClient;
import dev.box.mcp.BoxMcpClientTransport;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Launches stdio MCP servers in sandboxes with the reference's launch sequence, and returns an MCP
 * client on {@link BoxMcpClientTransport}:
 *
 * <ol>
 *   <li>wait until Box is available (polling every second, up to the startup timeout);
 *   <li>create the shared MCP session ({@code mcp-shared}, or {@code mcp-shared-<hash>} for other
 *       resource settings), persistent, with the agent host's workspace;
 *   <li>stage the host project, if any, into {@code <workspace>/.mcp/<process id>/workspace};
 *   <li>install a staged Python project's dependencies into its {@code .venv} when its manifests
 *       changed;
 *   <li>start the process unless it already runs, host paths rewritten to the staged copy;
 *   <li>initialize an MCP client, 10 s per attempt, retrying every 2 s while the process still runs
 *       (a cold start, such as {@code npx -y} installing).
 * </ol>
 *
 * <p>A failure of these steps is retried up to {@value #MAX_RETRIES} times after 2, 4 and 8 s,
 * stopping the process in between; then the launch fails with "Failed after 4 attempts". Box being
 * unavailable and cold starts do not count against this budget.
 */
public final class McpLauncher {
  /** Creates .venv and pip-installs the project ($BOX_PIP_FROM says how) into it. */
  private static final String INSTALL_PYTHON_PROJECT =
      ShellScript.load(McpLauncher.class, "install-python-project.sh");

  /** {@code sh -lc VENV_EXEC sh DIR PROGRAM ARGS...} runs the program in DIR/.venv. */
  private static final String VENV_EXEC = ShellScript.load(McpLauncher.class, "venv-exec.sh");

  /** The fatal retry budget (4 attempts in all). */
  public static final int MAX_RETRIES = 3;

  /** How long one MCP initialization may take. */
  public static final Duration INIT_TIMEOUT = Duration.ofSeconds(10);

  /** The wait between cold-start retries. */
  public static final Duration COLD_START_DELAY = Duration.ofSeconds(2);

  private static final Duration POLL = Duration.ofSeconds(1);
  private static final Logger log = LoggerFactory.getLogger(McpLauncher.class);

  private final AgentHost host;

  McpLauncher(AgentHost host) {
    this.host = host;
  }

  /**
   * Launches {@code config}'s server and returns it initialized.
   *
   * @throws BoxRuntimeUnavailableException when Box stays unavailable for the startup timeout
   * @throws BoxException "Failed after 4 attempts: ..." when every attempt failed
   */
  public McpServerHandle launch(McpServerConfig config) {
    waitAvailable(config.startupTimeout());
    String sessionId = sessionId(config);
    for (int attempt = 0; ; attempt++) {
      try {
        return attempt(config, sessionId, attempt);
      } catch (RuntimeException e) {
        host.errors().record(e, sessionId);
        stopQuietly(sessionId, config.processId());
        if (attempt >= MAX_RETRIES) {
          throw new BoxException(
              BoxErrorCode.INTERNAL_ERROR,
              "Failed after " + (attempt + 1) + " attempts: " + e.getMessage(),
              e);
        }
        Duration delay = Duration.ofSeconds(2L << attempt);
        log.warn("MCP server {} failed to start, retrying in {}", config.processId(), delay, e);
        sleep(delay);
      }
    }
  }

  /**
   * The shared session of MCP servers with these resource settings: {@code mcp-shared} for the
   * defaults, else {@code mcp-shared-} and the first 12 hex digits of a SHA-256 of the settings.
   */
  public static String sessionId(McpServerConfig config) {
    TreeMap<String, String> profile = new TreeMap<>();
    SandboxSettings sandbox = config.sandbox();
    if (sandbox.image() != null) profile.put("image", sandbox.image());
    if (sandbox.cpus() != null) profile.put("cpus", sandbox.cpus().toString());
    if (sandbox.memoryMb() != null) profile.put("memory_mb", sandbox.memoryMb().toString());
    if (sandbox.pidsLimit() != null) profile.put("pids_limit", sandbox.pidsLimit().toString());
    if (Boolean.TRUE.equals(sandbox.readOnlyRootfs())) profile.put("read_only_rootfs", "true");
    if (config.network() != McpServerConfig.DEFAULT_NETWORK) {
      profile.put("network", config.network().wireName());
    }
    if (config.hostPathMode() != McpServerConfig.DEFAULT_HOST_PATH_MODE) {
      profile.put("host_path_mode", config.hostPathMode().wireName());
    }
    if (!sandbox.extraMounts().isEmpty())
      profile.put("extra_mounts", sandbox.extraMounts().toString());
    if (profile.isEmpty()) {
      return "mcp-shared";
    }
    try {
      byte[] hash =
          MessageDigest.getInstance("SHA-256")
              .digest(profile.toString().getBytes(StandardCharsets.UTF_8));
      return "mcp-shared-" + HexFormat.of().formatHex(hash).substring(0, 12);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private McpServerHandle attempt(McpServerConfig config, String sessionId, int attempt) {
    BoxClient client = host.client();
    client.createSession(sessionSpec(config, sessionId).build());
    Path hostPath =
        config.hostPath() != null
            ? config.hostPath().toAbsolutePath().normalize()
            : config.inferHostPath()
                ? McpStaging.inferHostPath(config.command(), config.args())
                : null;
    String cwd = BoxSpec.DEFAULT_MOUNT_PATH;
    Path staged = null;
    boolean venv = false;
    if (hostPath != null) {
      Path workspace = host.workspace();
      if (workspace == null) {
        throw new BoxValidationException(
            "staging an MCP server's project needs the agent host's workspace");
      }
      String rel = ".mcp/" + config.processId() + "/workspace";
      staged = workspace.resolve(rel);
      McpStaging.copyTree(hostPath, staged);
      cwd = BoxSpec.DEFAULT_MOUNT_PATH + "/" + rel;
      venv = installDependencies(config, sessionId, staged, cwd);
    }
    if (!running(sessionId, config.processId())) {
      client.startProcess(sessionId, processSpec(config, hostPath, cwd, venv));
    }
    McpSyncClient mcp = initialize(config, sessionId);
    McpServerProcess process =
        new McpServerProcess(host, new McpServerProcess.Id(sessionId, config.processId()));
    return new McpServerHandle(mcp, process, staged, attempt);
  }

  private BoxSpec.Builder sessionSpec(McpServerConfig config, String sessionId) {
    Path workspace = host.workspace();
    SandboxSettings sandbox =
        config.sandbox().toBuilder()
            .network(config.network())
            .hostPath(workspace == null ? null : workspace.toString())
            .hostPathMode(config.hostPathMode())
            .readOnlyRootfs(Boolean.TRUE.equals(config.sandbox().readOnlyRootfs()))
            .memoryMb(
                Objects.requireNonNullElse(
                    config.sandbox().memoryMb(), McpServerConfig.DEFAULT_MEMORY_MB))
            .workspaceQuotaMb(null)
            .build();
    return sandbox.applyTo(BoxSpec.builder(sessionId).persistent(true));
  }

  /**
   * Creates {@code <cwd>/.venv} and installs the project into it when the staged project is a
   * Python project whose manifests changed since the last install.
   *
   * @return whether the process runs in that virtualenv
   */
  private boolean installDependencies(
      McpServerConfig config, String sessionId, Path staged, String cwd) {
    String digest = McpStaging.pythonManifestDigest(staged);
    if (digest == null) {
      return false;
    }
    Path marker = staged.resolve(".box/python-env.sha256");
    try {
      if (Files.isRegularFile(marker) && Files.readString(marker).strip().equals(digest)) {
        return true;
      }
      BoxExecutionResult result =
          host.client()
              .exec(
                  sessionSpec(config, sessionId)
                      .cmd(INSTALL_PYTHON_PROJECT)
                      .env(
                          "BOX_PIP_FROM",
                          McpStaging.hasRequirements(staged) ? "requirements" : "project")
                      .workdir(cwd)
                      .timeoutSec((int) Math.max(1, config.startupTimeout().toSeconds()))
                      .build());
      if (!result.ok()) {
        String err = result.stderr();
        throw new BoxException(
            BoxErrorCode.INTERNAL_ERROR,
            "Dependency install failed (exit code "
                + result.exitCode()
                + "): "
                + err.substring(Math.max(0, err.length() - 500)));
      }
      Files.createDirectories(marker.getParent());
      Files.writeString(marker, digest);
      return true;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static BoxManagedProcessSpec processSpec(
      McpServerConfig config, @Nullable Path hostPath, String cwd, boolean venv) {
    String command = config.command();
    List<String> args = new ArrayList<>();
    if (hostPath != null) {
      command =
          McpStaging.isVenvPython(command, hostPath)
              ? "python"
              : McpStaging.rewrite(command, hostPath, cwd);
      config.args().forEach(a -> args.add(McpStaging.rewrite(a, hostPath, cwd)));
    } else {
      args.addAll(config.args());
    }
    if (venv) {
      args.addAll(0, List.of("-lc", VENV_EXEC, "sh", cwd, command));
      command = "sh";
    }
    return new BoxManagedProcessSpec(config.processId(), command, args, config.env(), cwd, 0);
  }

  /**
   * An initialized client; while the process runs, a failed initialization is a cold start, retried
   * every 2 s until the startup timeout.
   */
  private McpSyncClient initialize(McpServerConfig config, String sessionId) {
    int coldStarts = 0;
    long maxColdStarts =
        Math.max(1, config.startupTimeout().toMillis() / COLD_START_DELAY.toMillis());
    while (true) {
      McpSyncClient mcp =
          McpClient.sync(
                  BoxMcpClientTransport.builder(host.client(), sessionId)
                      .processId(config.processId())
                      .build())
              .initializationTimeout(INIT_TIMEOUT)
              .requestTimeout(Duration.ofSeconds(300))
              .build();
      try {
        mcp.initialize();
        return mcp;
      } catch (RuntimeException e) {
        mcp.close();
        BoxManagedProcessInfo info = host.client().process(sessionId, config.processId());
        if (info.status() == BoxManagedProcessStatus.EXITED) {
          throw new BoxException(
              BoxErrorCode.INTERNAL_ERROR,
              "MCP server process exited with code "
                  + info.exitCode()
                  + " before it initialized: "
                  + info.stderrPreview(),
              e);
        }
        if (++coldStarts > maxColdStarts) {
          throw e;
        }
        log.info("MCP server {} not ready yet (cold start): {}", config.processId(), e.toString());
        sleep(COLD_START_DELAY);
      }
    }
  }

  private boolean running(String sessionId, String processId) {
    try {
      return host.client().process(sessionId, processId).status()
          == BoxManagedProcessStatus.RUNNING;
    } catch (BoxManagedProcessNotFoundException e) {
      return false;
    }
  }

  private void waitAvailable(Duration timeout) {
    long polls = Math.max(1, timeout.toMillis() / POLL.toMillis());
    for (long i = 0; ; i++) {
      if (host.available() || (host.availability().probeNow() && host.available())) {
        return;
      }
      if (i >= polls) {
        throw new BoxRuntimeUnavailableException(
            "Box runtime is not available after " + timeout.toSeconds() + " seconds");
      }
      sleep(POLL);
    }
  }

  private void stopQuietly(String sessionId, String processId) {
    try {
      host.client().stopProcess(sessionId, processId);
    } catch (BoxException e) {
      // Never started, or gone already.
    }
  }

  private void sleep(Duration duration) {
    try {
      host.sleeper().sleep(duration);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new BoxRuntimeUnavailableException("interrupted while launching an MCP server", e);
    }
  }
}
