package dev.box.guard;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The real {@code box-agent} in network mode on this host, outside any sandbox, listening on a free
 * loopback port with a fresh secret; for tests. Skips the calling test when the agent could not be
 * built here.
 */
public final class ListeningAgent implements AutoCloseable {
  private final Process process;
  private final int port;
  private final byte[] secret;

  private ListeningAgent(Process process, int port, byte[] secret) {
    this.process = process;
    this.port = port;
    this.secret = secret;
  }

  /** Installs the agent under {@code dir} and starts it. */
  public static ListeningAgent start(Path dir) throws IOException {
    return start(dir, List.of(), List.of());
  }

  /**
   * Installs the agent and {@code box-guard} under {@code dir} and starts the agent as a pod of a
   * network-off session does: {@code box-guard --net-off -- box-agent ... --netns 3 4}.
   */
  public static ListeningAgent startWithoutNetwork(Path dir) throws IOException {
    SyscallGuard guard = SyscallGuard.install(dir.resolve("data"));
    assumeTrue(guard.available(), guard.reason());
    return start(
        dir,
        List.of(Objects.requireNonNull(guard.binary()).toString(), "--net-off", "--"),
        List.of("--netns", "3", "4"));
  }

  private static ListeningAgent start(Path dir, List<String> before, List<String> after)
      throws IOException {
    ExecAgent installed = ExecAgent.install(dir.resolve("data"));
    assumeTrue(installed.available(), installed.reason());
    byte[] secret = new byte[32];
    ThreadLocalRandom.current().nextBytes(secret);
    Path secretFile = Files.write(dir.resolve("secret"), secret);
    int port;
    try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = probe.getLocalPort();
    }
    List<String> command = new ArrayList<>(before);
    command.addAll(
        List.of(
            Objects.requireNonNull(installed.binary()).toString(),
            "--listen",
            Integer.toString(port),
            secretFile.toString()));
    command.addAll(after);
    Process process =
        new ProcessBuilder(command)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
    return new ListeningAgent(process, port, secret);
  }

  /** The agent's process. */
  public Process process() {
    return process;
  }

  /** The loopback port it listens on. */
  public int port() {
    return port;
  }

  /** A copy of its secret. */
  public byte[] secret() {
    return secret.clone();
  }

  /** Kills the agent and everything it left. */
  @Override
  public void close() throws InterruptedException {
    process.descendants().forEach(ProcessHandle::destroyForcibly);
    process.destroyForcibly().waitFor();
  }
}
