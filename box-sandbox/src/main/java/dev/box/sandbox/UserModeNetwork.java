package dev.box.sandbox;

import dev.box.api.Cidr;
import dev.box.api.internal.ShellScript;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The outside connection of a network-on sandbox: slirp4netns attached to the sandbox's own network
 * namespace.
 *
 * <p>slirp4netns makes a tap device in the namespace and carries the sandbox's TCP and UDP through
 * ordinary sockets of the host, so the sandbox gets outbound connectivity without a bridge, a veth
 * or any change to the host's network. Connections to its gateway are not forwarded to the host's
 * loopback ({@code --disable-host-loopback}); DNS goes to its forwarder at {@link #DNS}, which asks
 * the host's resolvers. slirp4netns runs sandboxed itself and ends when its standard input ends, so
 * a server that dies takes it along.
 */
public final class UserModeNetwork {
  /** The file under the backend's etc directory that sandboxes see as /etc/resolv.conf. */
  public static final String RESOLV_CONF = "resolv.conf";

  /** slirp4netns's DNS forwarder, the only resolver a sandbox knows. */
  public static final Cidr DNS = Cidr.parse("10.0.2.3");

  /** slirp4netns's gateway: rejected by the firewall whatever the operator allows. */
  static final Cidr GATEWAY = Cidr.parse("10.0.2.2");

  /** The text of the sandbox's resolv.conf. */
  public static final String RESOLV_CONF_TEXT = "nameserver 10.0.2.3\noptions edns0\n";

  private static final long READY_SECONDS = 10;

  /** A fixed script; the binary and the pid are its arguments. */
  private static final String SCRIPT =
      ShellScript.load(UserModeNetwork.class, "user-mode-network.sh");

  private UserModeNetwork() {}

  /** Blocks never to allow in any sandbox this network serves, on top of the policy's. */
  public static List<Cidr> forbidden() {
    return List.of(GATEWAY);
  }

  /**
   * Starts slirp4netns for the namespace of {@code pid} and returns once the namespace is
   * configured.
   */
  public static Process start(Path slirp4netns, long pid, ExecutorService readers)
      throws IOException {
    ProcessBuilder builder =
        new ProcessBuilder("/bin/sh", "-c", SCRIPT, "box-net", slirp4netns.toString(), "" + pid)
            .redirectError(ProcessBuilder.Redirect.DISCARD);
    builder.environment().clear();
    builder.environment().put("PATH", "/usr/bin:/bin");
    builder.directory(Path.of("/").toFile());
    Process process = builder.start();
    Future<Integer> ready = readers.submit(() -> firstByte(process.getInputStream()));
    try {
      if (ready.get(READY_SECONDS, TimeUnit.SECONDS) != '1') {
        throw new IOException("slirp4netns ended before the network was ready");
      }
      return process;
    } catch (TimeoutException e) {
      process.destroyForcibly();
      throw new IOException("slirp4netns was not ready within " + READY_SECONDS + " s", e);
    } catch (ExecutionException e) {
      process.destroyForcibly();
      throw new IOException("slirp4netns failed: " + e.getCause(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
      throw new IOException("interrupted while starting slirp4netns", e);
    } catch (IOException e) {
      process.destroyForcibly();
      throw e;
    }
  }

  /** Ends the connection: closing its standard input ends it; the kill is the backstop. */
  public static void stop(Process process) {
    try {
      process.getOutputStream().close();
    } catch (IOException e) {
      // It is being killed either way.
    }
    process.destroyForcibly();
  }

  private static int firstByte(InputStream in) throws IOException {
    return in.read();
  }
}
