package dev.box.backend.kubernetes;

import io.fabric8.kubernetes.client.NamespacedKubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import java.net.InetAddress;
import java.util.HashMap;

/**
 * A stand-in for a cluster's API server: fabric8's KubernetesMockServer in CRUD mode on loopback
 * (no API server can run on this machine). It stores, lists, patches, deletes and watches any
 * resource as a real one does, but runs nothing: no scheduler, no kubelet, no garbage collector, no
 * admission. Tests that need pods to run add the stand-in kubelet.
 */
final class ApiServer implements AutoCloseable {
  private final KubernetesMockServer server =
      new KubernetesMockServer(
          new Context(),
          new MockWebServer(),
          new HashMap<>(),
          new KubernetesCrudDispatcher(),
          false);

  ApiServer() {
    server.init(InetAddress.getLoopbackAddress(), 0);
  }

  /** A new client of this server (close it). */
  NamespacedKubernetesClient client() {
    return server.createClient();
  }

  @Override
  public void close() {
    server.destroy();
  }
}
