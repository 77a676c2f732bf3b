package dev.box.backend.kubernetes;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The local Docker engine's command line, for the stand-in kubelet: each call an argument vector,
 * never a shell. {@code DOCKER_SOCKET} names the engine, as {@code scripts/engines up} sets it.
 */
final class Docker {
  private static final String HOST =
      "unix://" + System.getenv().getOrDefault("DOCKER_SOCKET", "/var/run/docker.sock");

  private Docker() {}

  /** Whether the engine answers. */
  static boolean available() {
    try {
      call(List.of("version", "--format", "{{.Server.Version}}"));
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /** Runs {@code docker ARGS} and returns its stdout, or throws with its stderr. */
  static String run(List<String> args) throws IOException {
    return call(args);
  }

  /** Starts {@code docker ARGS}, its stdio the returned process's pipes. */
  static Process start(List<String> args) throws IOException {
    List<String> argv = new ArrayList<>(List.of("docker", "--host", HOST));
    argv.addAll(args);
    return new ProcessBuilder(argv).start();
  }

  /** The address of {@code container} on {@code network}. */
  static String ip(String container, String network) throws IOException {
    String ip =
        call(List.of(
                "inspect",
                "--format",
                "{{(index .NetworkSettings.Networks \"" + network + "\").IPAddress}}",
                container))
            .strip();
    if (ip.isEmpty()) {
      throw new IOException(container + " has no address on " + network);
    }
    return ip;
  }

  /**
   * Makes the internal network {@code name} (no route out of the machine) unless it exists with its
   * gateway, the node, named in its address configuration: a network made with a subnet but no
   * gateway (as an earlier stand-in made it) names none there on some engines, though its bridge
   * has one, so it is made again.
   */
  static void ensureNetwork(String name) throws IOException {
    String gateway;
    try {
      gateway =
          call(List.of(
                  "network",
                  "inspect",
                  "--format",
                  "{{range .IPAM.Config}}{{.Gateway}}{{end}}",
                  name))
              .strip();
    } catch (IOException e) {
      create(name);
      return;
    }
    if (gateway.isEmpty()) {
      call(List.of("network", "rm", name));
      create(name);
    }
  }

  private static void create(String name) throws IOException {
    call(
        List.of(
            "network",
            "create",
            "--internal",
            "--subnet",
            "10.244.0.0/24",
            "--gateway",
            "10.244.0.1",
            name));
  }

  /** Removes {@code container} and its anonymous volumes, if it exists. */
  static void removeQuietly(String container) {
    try {
      call(List.of("rm", "--force", "--volumes", container));
    } catch (IOException e) {
      // Already gone.
    }
  }

  /** Sets the numeric owner of {@code path}. */
  static void chown(Path path, long uid, long gid) throws IOException {
    Files.setAttribute(path, "unix:uid", (int) uid);
    Files.setAttribute(path, "unix:gid", (int) gid);
  }

  private static String call(List<String> args) throws IOException {
    Process p = start(args);
    p.getOutputStream().close();
    byte[] out = p.getInputStream().readAllBytes();
    byte[] err = p.getErrorStream().readAllBytes();
    try {
      if (!p.waitFor(120, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IOException("docker " + args.getFirst() + " did not end within 120 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      p.destroyForcibly();
      throw new IOException("interrupted", e);
    }
    if (p.exitValue() != 0) {
      throw new IOException(
          "docker "
              + String.join(" ", args)
              + ": "
              + new String(err, StandardCharsets.UTF_8).strip());
    }
    return new String(out, StandardCharsets.UTF_8);
  }
}
