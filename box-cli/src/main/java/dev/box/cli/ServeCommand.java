package dev.box.cli;

import dev.box.langbot.StdioControl;
import dev.box.server.BoxServer;
import dev.box.server.ServerConfig;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code box serve}: runs a server until the JVM is asked to stop.
 *
 * <p>Only the flags given on the command line reach {@link ServerConfig#resolve}, so that {@code
 * BOX_*} variables and the config file can supply the rest; values are passed as typed and checked
 * there, with the same messages whichever source they come from.
 */
@Command(
    name = "serve",
    description = {
      "Runs the Box server until Ctrl-C or SIGTERM.",
      "Each option can also come from BOX_<NAME> (for example BOX_DATA_DIR) or the config file;"
          + " options win over variables, variables over the file."
    })
final class ServeCommand implements Callable<Integer> {
  @Spec private @Nullable CommandSpec spec;

  @Option(names = "--host", paramLabel = "HOST", description = "Address to bind (127.0.0.1).")
  private @Nullable String host;

  @Option(
      names = {"--port", "--ws-control-port"},
      paramLabel = "PORT",
      description = "Port to bind, 0 for any (5410).")
  private @Nullable String port;

  @Option(
      names = {"-s", "--stdio-control"},
      description =
          "Run LangBot's control channel over stdin/stdout (as LangBot launches its runtime);"
              + " requires LANGBOT_BOX_TRUSTED_INSTANCE_UUID.")
  private boolean stdioControl;

  @Option(names = "--config", paramLabel = "FILE", description = "A YAML or JSON config file.")
  private @Nullable String config;

  @Option(
      names = "--data-dir",
      paramLabel = "DIR",
      description = "Workspaces and state (data/box).")
  private @Nullable String dataDir;

  @Option(
      names = "--backend",
      paramLabel = "NAME",
      description =
          "Sandbox backend: local (the first available of docker, podman, bwrap), docker, podman"
              + " or bwrap (local).")
  private @Nullable String backend;

  @Option(
      names = "--image",
      paramLabel = "IMAGE",
      description = "Container image of sessions whose spec names none (docker, podman).")
  private @Nullable String image;

  @Option(
      names = "--docker-host",
      paramLabel = "SOCKET",
      description = "Docker Engine API socket (DOCKER_HOST if unix://, else /var/run/docker.sock).")
  private @Nullable String dockerHost;

  @Option(
      names = "--podman-host",
      paramLabel = "SOCKET",
      description = "Podman API socket (/run/podman/podman.sock).")
  private @Nullable String podmanHost;

  @Option(
      names = "--seccomp-profile",
      paramLabel = "FILE",
      description =
          "A seccomp profile (JSON) for the container engines to apply instead of their default;"
              + " Box's own filter applies under it (docker, podman).")
  private @Nullable String seccompProfile;

  @Option(
      names = "--control-token",
      paramLabel = "TOKEN",
      description =
          "Require this bearer token on every API request (default: LANGBOT_BOX_CONTROL_TOKEN,"
              + " else a token generated in <data dir>/control-token).")
  private @Nullable String controlToken;

  @Option(
      names = "--insecure",
      description =
          "DANGEROUS: with no token configured, require none instead of generating one; anything"
              + " that reaches the port can then run code as this user.")
  private boolean insecure;

  @Option(
      names = "--session-ttl-sec",
      paramLabel = "N",
      description = "Reap sessions idle this long, 0 for never (300).")
  private @Nullable String sessionTtlSec;

  @Option(names = "--max-sessions", paramLabel = "N", description = "Session capacity (64).")
  private @Nullable String maxSessions;

  @Option(
      names = "--max-output-bytes",
      paramLabel = "N",
      description = "Bytes kept per output stream of an exec (1048576).")
  private @Nullable String maxOutputBytes;

  @Option(
      names = "--allowed-mount-roots",
      paramLabel = "A,B",
      description = "Host directories mounts must be under (any).")
  private @Nullable String allowedMountRoots;

  @Override
  public Integer call() throws InterruptedException, IOException {
    // In stdio mode stdout carries the protocol only: anything else printed goes to stderr.
    OutputStream protocol = new FileOutputStream(FileDescriptor.out);
    if (stdioControl) {
      System.setOut(System.err);
    }
    BoxServer server;
    try {
      server =
          BoxServer.start(
              ServerConfig.resolve(flags(), System.getenv()),
              Clock.systemUTC(),
              System.getenv(),
              stdioControl);
    } catch (IllegalArgumentException | IllegalStateException e) {
      Objects.requireNonNull(spec, "picocli injects the spec")
          .commandLine()
          .getErr()
          .println("box: " + e.getMessage());
      return BoxCli.EXIT_USAGE;
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  server.close();
                  stopped.countDown();
                },
                "box-shutdown"));
    if (stdioControl) {
      new StdioControl(server.langbot(), System.in, protocol).run();
      server.close();
      return 0;
    }
    stopped.await();
    return 0;
  }

  /** The flags the user gave, by {@link ServerConfig#KEYS} name. */
  Map<String, String> flags() {
    Map<String, String> flags = new LinkedHashMap<>();
    put(flags, "host", host);
    put(flags, "port", port);
    put(flags, "config", config);
    put(flags, "data_dir", dataDir);
    put(flags, "backend", backend);
    put(flags, "image", image);
    put(flags, "docker_host", dockerHost);
    put(flags, "podman_host", podmanHost);
    put(flags, "seccomp_profile", seccompProfile);
    put(flags, "control_token", controlToken);
    put(flags, "insecure", insecure ? "true" : null);
    put(flags, "session_ttl_sec", sessionTtlSec);
    put(flags, "max_sessions", maxSessions);
    put(flags, "max_output_bytes", maxOutputBytes);
    put(flags, "allowed_mount_roots", allowedMountRoots);
    return flags;
  }

  private static void put(Map<String, String> flags, String key, @Nullable String value) {
    if (value != null) {
      flags.put(key, value);
    }
  }
}
