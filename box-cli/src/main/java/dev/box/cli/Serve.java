package dev.box.cli;

import dev.box.client.BoxClient;
import dev.box.core.settings.IntSetting;
import dev.box.core.settings.RuntimeLimits;
import dev.box.langbot.StdioControl;
import dev.box.mcpserver.McpHttpEndpoint;
import dev.box.server.BoxServer;
import dev.box.server.ServerConfig;
import dev.box.server.http.HttpMount;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.net.URI;
import java.time.Clock;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * {@code box serve} without picocli: the settings it takes as options, its arguments read where
 * they are plain, and the server run until it is asked to stop. {@link Main} starts the server
 * through it alone, so a start loads none of picocli's classes (Java 5 bytecode, which the AOT
 * cache cannot hold); {@link ServeCommand} is the same command for picocli.
 *
 * <p>Only the flags given on the command line reach {@link ServerConfig#resolve}, so that {@code
 * BOX_*} variables and the config file can supply the rest; values are passed as typed and checked
 * there, with the same messages whichever source they come from.
 */
final class Serve {
  /** Where the server serves MCP over streamable HTTP. */
  static final String MCP_PATH = "/mcp";

  private Serve() {}

  /**
   * An option that passes one {@link ServerConfig} setting through as typed, named after its key
   * ({@code --data-dir} for {@code data_dir}).
   */
  record Setting(String key, String label, String description, String... aliases) {
    /** A limit of {@link RuntimeLimits}, its default from the table. */
    static Setting limit(IntSetting limit, String description) {
      return new Setting(limit.key(), "N", description + " (" + limit.defaultValue() + ").");
    }

    String name() {
      return "--" + key.replace('_', '-');
    }
  }

  /** The settings {@code box serve} takes as options, each added by {@link Settings}. */
  static final List<Setting> SETTINGS =
      List.of(
          new Setting("host", "HOST", "Address to bind (127.0.0.1)."),
          new Setting("port", "PORT", "Port to bind, 0 for any (5410).", "--ws-control-port"),
          new Setting("config", "FILE", "A YAML or JSON config file."),
          new Setting("data_dir", "DIR", "Workspaces and state (data/box)."),
          new Setting(
              "backend",
              "NAME",
              "Sandbox backend: local (the first available of docker, podman, bwrap, nsjail),"
                  + " docker, podman, bwrap or nsjail (local)."),
          new Setting(
              "image",
              "IMAGE",
              "Container image of sessions whose spec names none (docker, podman, boxlite)."),
          new Setting(
              "docker_host",
              "SOCKET",
              "Docker Engine API socket (DOCKER_HOST if unix://, else /var/run/docker.sock)."),
          new Setting("podman_host", "SOCKET", "Podman API socket (/run/podman/podman.sock)."),
          new Setting(
              "seccomp_profile",
              "FILE",
              "A seccomp profile (JSON) for the container engines to apply instead of their"
                  + " default; Box's own filter applies under it (docker, podman)."),
          new Setting(
              "e2b_api_url",
              "URL",
              "E2B's control plane (E2B_API_URL wins; https://api.e2b.app). The API key comes"
                  + " from E2B_API_KEY or the config file only, never a flag."),
          new Setting("e2b_template", "NAME", "E2B template of sessions naming no image (base)."),
          new Setting(
              "e2b_envd_url",
              "URL",
              "Where each E2B sandbox's envd answers (https://49983-{sandboxID}.{domain})."),
          new Setting(
              "boxlite_url",
              "URL",
              "The BoxLite server of the boxlite backend (http://127.0.0.1:8100). Its token comes"
                  + " from BOX_BOXLITE_TOKEN or the config file only, never a flag."),
          new Setting(
              "control_token",
              "TOKEN",
              "Require this bearer token on every API request (default:"
                  + " LANGBOT_BOX_CONTROL_TOKEN, else a token generated in <data"
                  + " dir>/control-token)."),
          Setting.limit(RuntimeLimits.SESSION_TTL_SEC, "Reap sessions idle this long, 0 for never"),
          Setting.limit(
              RuntimeLimits.PAUSED_SESSION_TTL_SEC,
              "Delete sessions paused this long, 0 for never (persistent ones never)"),
          Setting.limit(RuntimeLimits.MAX_SESSIONS, "Session capacity"),
          Setting.limit(RuntimeLimits.MAX_OUTPUT_BYTES, "Bytes kept per output stream of an exec"),
          Setting.limit(
              RuntimeLimits.MAX_FILE_BYTES, "Largest file the files API uploads or downloads"),
          Setting.limit(
              RuntimeLimits.MAX_ARCHIVE_BYTES, "Largest tar the archive API uploads or downloads"),
          Setting.limit(
              RuntimeLimits.MAX_ARCHIVE_ENTRIES,
              "Most entries of an uploaded tar, and of a listing"),
          Setting.limit(RuntimeLimits.MAX_SNAPSHOTS, "Most snapshots kept at once"),
          Setting.limit(
              RuntimeLimits.WORKSPACE_STORE_GIB,
              "GiB of the sparse btrfs image of workspaces, when the data dir is not on btrfs"),
          new Setting(
              "allowed_mount_roots", "A,B", "Host directories mounts must be under (any)."));

  /** {@link #SETTINGS} by each of their option names. */
  private static final Map<String, Setting> SETTINGS_BY_NAME = byName();

  /** How long a stop asked for while the server starts waits for the start to end. */
  private static final long START_WAIT_SECONDS = 60;

  private static Map<String, Setting> byName() {
    Map<String, Setting> byName = new HashMap<>();
    for (Setting setting : SETTINGS) {
      byName.put(setting.name(), setting);
      for (String alias : setting.aliases()) {
        byName.put(alias, setting);
      }
    }
    return byName;
  }

  /**
   * The arguments after {@code serve} as {@link ServeCommand#flags} and {@code --stdio-control}
   * would have them once picocli parsed them, read without picocli (whose classes take a quarter of
   * the server's start to load and run), or null where they need picocli: help, an unknown or
   * repeated option, a value that looks like an option, an {@code @file}, anything but {@code
   * --name=value}, {@code --name value} and the two flags by one of their names.
   */
  static @Nullable Direct direct(List<String> args) {
    Map<String, String> flags = new LinkedHashMap<>();
    boolean stdio = false;
    boolean insecureGiven = false;
    for (int i = 0; i < args.size(); i++) {
      String arg = args.get(i);
      if (arg.equals("-s") || arg.equals("--stdio-control")) {
        if (stdio) {
          return null;
        }
        stdio = true;
        continue;
      }
      if (arg.equals("--insecure")) {
        if (insecureGiven) {
          return null;
        }
        insecureGiven = true;
        continue;
      }
      int equals = arg.indexOf('=');
      String name = equals < 0 ? arg : arg.substring(0, equals);
      Setting setting = SETTINGS_BY_NAME.get(name);
      if (setting == null || flags.containsKey(setting.key())) {
        return null;
      }
      String value;
      if (equals >= 0) {
        value = arg.substring(equals + 1);
      } else if (i + 1 < args.size()) {
        value = args.get(++i);
      } else {
        return null;
      }
      if (value.isEmpty() || value.startsWith("-") || value.startsWith("@")) {
        return null;
      }
      flags.put(setting.key(), value);
    }
    if (insecureGiven) {
      flags.put("insecure", "true");
    }
    return new Direct(flags, stdio);
  }

  /** {@code box serve}'s arguments read by {@link #direct}. */
  record Direct(Map<String, String> flags, boolean stdioControl) {}

  /**
   * Runs the server with {@code flags} (by {@link ServerConfig#KEYS} name) until it is asked to
   * stop; a configuration it refuses is written to {@code err} and returns {@link
   * BoxCli#EXIT_USAGE}.
   */
  static int serve(Map<String, String> flags, boolean stdioControl, PrintWriter err)
      throws InterruptedException, IOException {
    // In stdio mode stdout carries the protocol only: anything else printed goes to stderr.
    OutputStream protocol = new FileOutputStream(FileDescriptor.out);
    if (stdioControl) {
      System.setOut(System.err);
    }
    // MCP over streamable HTTP on the server's own port, behind its control token; its tools reach
    // the server as any client does, so they get the API's checks and limits unchanged.
    McpHttpEndpoint mcp = McpHttpEndpoint.create(MCP_PATH, BoxServer.VERSION);
    // The hook comes before the start: a SIGTERM or Ctrl-C while the server starts, or right after
    // it says it listens, lets the start end and then stops what it started (its pool, its mounts).
    CompletableFuture<@Nullable BoxServer> started = new CompletableFuture<>();
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  BoxServer made = startedWithin(started);
                  if (made != null) {
                    made.close();
                  }
                  mcp.close();
                  stopped.countDown();
                },
                "box-shutdown"));
    BoxServer server;
    try {
      server =
          BoxServer.start(
              ServerConfig.resolve(flags, System.getenv()),
              Clock.systemUTC(),
              System.getenv(),
              stdioControl,
              List.of(new HttpMount(MCP_PATH, mcp.servlet())));
      started.complete(server);
    } catch (IllegalArgumentException | IllegalStateException e) {
      err.println("box: " + e.getMessage());
      return BoxCli.EXIT_USAGE;
    } finally {
      started.complete(null);
    }
    URI local = server.localUri();
    if (local != null) {
      mcp.connect(() -> BoxClient.builder(local).controlToken(server.controlToken()).build());
    }
    if (stdioControl) {
      new StdioControl(server.langbot(), System.in, protocol).run();
      server.close();
      mcp.close();
      return 0;
    }
    stopped.await();
    return 0;
  }

  /**
   * The server the start made, once it ended; null when it failed, or did not end within {@link
   * #START_WAIT_SECONDS} (a start that hangs must not keep a stop from ending).
   */
  private static @Nullable BoxServer startedWithin(CompletableFuture<@Nullable BoxServer> started) {
    try {
      return started.get(START_WAIT_SECONDS, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      // Not completed so: a failed start completes it with null.
    } catch (TimeoutException e) {
      System.err.println(
          "box: stopping before the start ended ("
              + START_WAIT_SECONDS
              + " s): the next start of this data dir removes what it made");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return null;
  }
}
