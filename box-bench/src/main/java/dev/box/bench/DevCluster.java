package dev.box.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The stand-in Kubernetes cluster of {@code scripts/dev-cluster}, for the kubernetes backend's
 * measurement: {@link #up} starts it (building what it needs) and {@link #close} stops it and
 * everything it started. Its API server is an in-memory mock and its kubelet runs each pod as a
 * Docker container, so what it measures is Box's kubernetes backend over Docker, not a cluster.
 */
final class DevCluster implements AutoCloseable {
  private static final Path SCRIPT = Path.of("scripts", "dev-cluster");
  private static final long TIMEOUT_MINUTES = 15;

  private final Path kubeconfig;

  private DevCluster(Path kubeconfig) {
    this.kubeconfig = kubeconfig;
  }

  /** Runs {@code scripts/dev-cluster up} from the repository (the working directory). */
  static DevCluster up() throws IOException, InterruptedException {
    if (!Files.isExecutable(SCRIPT)) {
      throw new IOException(SCRIPT + " not found: run from the repository (bench/run does)");
    }
    Process up =
        new ProcessBuilder(SCRIPT.toString(), "up")
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .redirectInput(ProcessBuilder.Redirect.PIPE)
            .start();
    up.getOutputStream().close();
    String out = new String(up.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
    if (!up.waitFor(TIMEOUT_MINUTES, TimeUnit.MINUTES) || up.exitValue() != 0) {
      up.destroyForcibly();
      throw new IOException(SCRIPT + " up failed");
    }
    if (!out.startsWith("KUBECONFIG=")) {
      throw new IOException(SCRIPT + " up printed " + out);
    }
    return new DevCluster(Path.of(out.substring("KUBECONFIG=".length())));
  }

  /**
   * The agent image the script built: {@code BOX_DEV_CLUSTER_AGENT_IMAGE}, which the script reads
   * too, else the server's default.
   */
  static String agentImage() {
    return System.getenv().getOrDefault("BOX_DEV_CLUSTER_AGENT_IMAGE", "box-agent:latest");
  }

  /** The cluster's kubeconfig. */
  Path kubeconfig() {
    return kubeconfig;
  }

  /** Runs {@code scripts/dev-cluster down}. */
  @Override
  public void close() throws IOException, InterruptedException {
    Process down = new ProcessBuilder(List.of(SCRIPT.toString(), "down")).inheritIO().start();
    if (!down.waitFor(TIMEOUT_MINUTES, TimeUnit.MINUTES) || down.exitValue() != 0) {
      down.destroyForcibly();
      throw new IOException(SCRIPT + " down failed");
    }
  }
}
