package dev.box.backend.kubernetes;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The stand-in cluster as a process of its own, for {@code scripts/dev-cluster}: a place to try
 * {@code box serve --backend kubernetes} and to measure it, with the same API server stand-in and
 * kubelet as the tests (see {@link StandInCluster}; nothing here is a real cluster).
 *
 * <p>Usage: {@code DevCluster STATE_DIR [NAMESPACE]} (namespace default {@code box-sandboxes}, the
 * server's default {@code k8s_namespace}). It starts the cluster on a free loopback port, keeps the
 * pods' volumes in {@code STATE_DIR/pods}, and then writes {@code STATE_DIR/pid} and, last, {@code
 * STATE_DIR/kubeconfig} (each renamed into place, so a reader never sees half a file): the
 * kubeconfig's presence says the cluster answers. On {@code SIGTERM} (or Ctrl-C) its kubelet
 * removes the pods' containers, the pods' Docker network goes if this process made it and no other
 * stand-in uses it, and the two files are removed.
 */
public final class DevCluster {
  private static final Logger MOCK_SERVER_LOG = Logger.getLogger("io.fabric8.mockwebserver");

  private DevCluster() {}

  /** Starts the cluster and serves until the process is told to stop. */
  public static void main(String[] args) throws IOException, InterruptedException {
    if (args.length < 1 || args.length > 2) {
      System.err.println("usage: DevCluster STATE_DIR [NAMESPACE]");
      System.exit(2);
    }
    // The mock API server logs every request: its log would grow with every call.
    MOCK_SERVER_LOG.setLevel(Level.WARNING);
    Path state = Files.createDirectories(Path.of(args[0]));
    String namespace = args.length > 1 ? args[1] : "box-sandboxes";
    boolean ownNetwork = !networkExists();
    StandInCluster cluster =
        new StandInCluster(namespace, Files.createDirectories(state.resolve("pods")));
    Path kubeconfig = state.resolve("kubeconfig");
    Path pid = state.resolve("pid");
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  stop(cluster, ownNetwork, List.of(kubeconfig, pid));
                  stopped.countDown();
                },
                "dev-cluster-stop"));
    writeAtomically(pid, ProcessHandle.current().pid() + "\n");
    cluster.writeKubeconfig(state.resolve("kubeconfig.tmp"));
    Files.move(state.resolve("kubeconfig.tmp"), kubeconfig, StandardCopyOption.ATOMIC_MOVE);
    System.err.println("dev-cluster: serving namespace " + namespace + "; " + kubeconfig);
    stopped.await();
  }

  private static void stop(StandInCluster cluster, boolean ownNetwork, List<Path> files) {
    System.err.println("dev-cluster: stopping");
    for (Path file : files) {
      try {
        Files.deleteIfExists(file);
      } catch (IOException e) {
        System.err.println("dev-cluster: could not remove " + file + ": " + e);
      }
    }
    cluster.close();
    if (ownNetwork) {
      try {
        Docker.run(List.of("network", "rm", StandInKubelet.NETWORK));
      } catch (IOException e) {
        // Another stand-in cluster (a test) has containers on it: it stays for them.
        System.err.println("dev-cluster: the pods' network stays: " + e.getMessage());
      }
    }
    System.err.println("dev-cluster: stopped");
  }

  private static boolean networkExists() {
    try {
      Docker.run(List.of("network", "inspect", StandInKubelet.NETWORK));
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  private static void writeAtomically(Path file, String text) throws IOException {
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    Files.writeString(tmp, text, StandardCharsets.UTF_8);
    Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE);
  }
}
