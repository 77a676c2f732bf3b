package dev.box.backend.kubernetes;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.ExecWatch;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A pod's agent reached through the cluster's API server, for a server that cannot reach the pod
 * network (it runs outside the cluster, or the network forbids it): a listener on this host's
 * loopback whose every connection is relayed, byte for byte, to one exec of {@code box-agent
 * --pipe} in the pod's sandbox container, which connects to the agent on the pod's loopback. The
 * agent's protocol passes through unchanged, secret included (every connection still opens with it,
 * so a local process that connects to the listener gets nothing without it).
 *
 * <p>The API server's exec has no half-close (fabric8 speaks {@code v4.channel.k8s.io}): the end of
 * either side ends the whole exec, which the agent's protocol allows, since the server never
 * half-closes a connection to the agent. At most {@value #MAX_CONNECTIONS} connections are relayed
 * at once; more are closed, as the agent closes controls beyond its own bound.
 */
final class AgentTunnel implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(AgentTunnel.class);

  /** The most connections relayed at once: a control and up to three streams per process. */
  static final int MAX_CONNECTIONS = 256;

  private static final int BUFFER = 64 * 1024;

  private final KubernetesClient client;
  private final String namespace;
  private final String pod;
  private final ServerSocketChannel listener;
  private final InetSocketAddress address;
  private final Set<SocketChannel> locals = ConcurrentHashMap.newKeySet();
  private final Set<ExecWatch> execs = ConcurrentHashMap.newKeySet();

  private AgentTunnel(
      KubernetesClient client, String namespace, String pod, ServerSocketChannel listener)
      throws IOException {
    this.client = client;
    this.namespace = namespace;
    this.pod = pod;
    this.listener = listener;
    this.address = (InetSocketAddress) listener.getLocalAddress();
  }

  /** Opens the tunnel to the agent of pod {@code pod}, listening on a free loopback port. */
  static AgentTunnel open(KubernetesClient client, String namespace, String pod)
      throws IOException {
    ServerSocketChannel listener = ServerSocketChannel.open();
    AgentTunnel tunnel;
    try {
      listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      tunnel = new AgentTunnel(client, namespace, pod, listener);
    } catch (IOException e) {
      listener.close();
      throw e;
    }
    Thread.ofVirtual().name("box-tunnel-" + pod).start(tunnel::accept);
    return tunnel;
  }

  /** Where the server connects to reach the agent. */
  InetSocketAddress address() {
    return address;
  }

  private void accept() {
    while (listener.isOpen()) {
      SocketChannel local;
      try {
        local = listener.accept();
      } catch (IOException e) {
        return;
      }
      if (locals.size() >= MAX_CONNECTIONS) {
        closeQuietly(local);
        continue;
      }
      locals.add(local);
      Thread.ofVirtual().name("box-tunnel-" + pod).start(() -> relay(local));
    }
  }

  /** Relays {@code local} to an exec of the pipe in the pod until either side ends. */
  private void relay(SocketChannel local) {
    ExecWatch exec;
    try {
      exec =
          client
              .pods()
              .inNamespace(namespace)
              .withName(pod)
              .inContainer(PodShape.CONTAINER)
              .redirectingInput()
              .redirectingOutput()
              .exec(PodShape.BIN + "/box-agent", "--pipe", Integer.toString(PodShape.AGENT_PORT));
    } catch (KubernetesClientException e) {
      log.info("cannot exec the agent's pipe in pod {}: {}", pod, e.getMessage());
      closeQuietly(local);
      locals.remove(local);
      return;
    }
    execs.add(exec);
    if (!listener.isOpen()) {
      // Closed while the exec started: close() did not see it.
      end(local, exec);
      return;
    }
    Thread.ofVirtual()
        .name("box-tunnel-out-" + pod)
        .start(() -> copyOut(exec.getOutput(), local, exec));
    try (OutputStream toPod = exec.getInput()) {
      ByteBuffer buffer = ByteBuffer.allocate(BUFFER);
      while (local.read(buffer.clear()) >= 0) {
        toPod.write(buffer.array(), 0, buffer.position());
        toPod.flush();
      }
    } catch (IOException e) {
      log.debug("the tunnel of pod {} ended: {}", pod, e.getMessage());
    } finally {
      end(local, exec);
    }
  }

  private void copyOut(InputStream fromPod, SocketChannel local, ExecWatch exec) {
    byte[] buffer = new byte[BUFFER];
    try {
      for (int n; (n = fromPod.read(buffer)) >= 0; ) {
        ByteBuffer bytes = ByteBuffer.wrap(buffer, 0, n);
        while (bytes.hasRemaining()) {
          local.write(bytes);
        }
      }
    } catch (IOException e) {
      log.debug("the tunnel of pod {} ended: {}", pod, e.getMessage());
    } finally {
      end(local, exec);
    }
  }

  private void end(SocketChannel local, ExecWatch exec) {
    closeQuietly(local);
    exec.close();
    locals.remove(local);
    execs.remove(exec);
  }

  /** Stops listening and ends every relayed connection. */
  @Override
  public void close() {
    closeQuietly(listener);
    locals.forEach(AgentTunnel::closeQuietly);
    execs.forEach(ExecWatch::close);
  }

  private static void closeQuietly(AutoCloseable closeable) {
    try {
      closeable.close();
    } catch (Exception e) {
      // Closing: nothing to do.
    }
  }
}
