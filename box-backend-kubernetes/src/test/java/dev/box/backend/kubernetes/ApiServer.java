package dev.box.backend.kubernetes;

import io.fabric8.kubernetes.client.NamespacedKubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;

/**
 * A stand-in for a cluster's API server: fabric8's KubernetesMockServer in CRUD mode on loopback
 * (no API server can run on this machine). It stores, lists, patches, deletes and watches any
 * resource as a real one does, but runs nothing: no scheduler, no kubelet, no garbage collector, no
 * admission. Tests that need pods to run add the stand-in kubelet, which also runs the commands of
 * the pods' exec subresource ({@link StandInExec}).
 */
final class ApiServer implements AutoCloseable {
  private final StandInExec exec = new StandInExec();
  private final KubernetesMockServer server =
      new KubernetesMockServer(
          new Context(), new MockWebServer(), new HashMap<>(), new Dispatching(exec), false);

  /**
   * The CRUD dispatcher, with the pods' exec subresource ({@link StandInExec}), and answering a
   * JSON patch whose {@code test} operation fails with 422 as an API server does: the mock's own
   * dispatcher throws, and the client then waits for an answer that never comes.
   */
  private static final class Dispatching extends KubernetesCrudDispatcher {
    private final StandInExec exec;

    Dispatching(StandInExec exec) {
      this.exec = exec;
    }

    @Override
    public MockResponse dispatch(RecordedRequest request) {
      MockResponse answer = exec.answer(request);
      return answer != null ? answer : super.dispatch(request);
    }

    @Override
    public MockResponse handlePatch(RecordedRequest request) {
      try {
        return super.handlePatch(request);
      } catch (RuntimeException e) {
        String message = String.valueOf(e.getMessage()).replace("\\", "").replace("\"", "'");
        return new MockResponse()
            .setResponseCode(422)
            .setBody(
                "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
                    + "\"reason\":\"Invalid\",\"code\":422,\"message\":\""
                    + message
                    + "\"}");
      }
    }
  }

  ApiServer() {
    server.init(InetAddress.getLoopbackAddress(), 0);
  }

  /** Runs the commands of the pods' exec subresource with {@code runner} (a kubelet's). */
  void serveExec(StandInExec.Runner runner) {
    exec.serveWith(runner);
  }

  /** A new client of this server (close it). */
  NamespacedKubernetesClient client() {
    return server.createClient();
  }

  /** Writes a kubeconfig that names this server, with no credentials, to {@code file}. */
  Path writeKubeconfig(Path file) throws IOException {
    String url = server.url("/").replaceAll("/$", "");
    return Files.writeString(
        file,
        String.join(
            "\n",
            "apiVersion: v1",
            "kind: Config",
            "clusters:",
            "- name: stand-in",
            "  cluster:",
            "    server: " + url,
            "contexts:",
            "- name: stand-in",
            "  context:",
            "    cluster: stand-in",
            "    user: nobody",
            "users:",
            "- name: nobody",
            "  user: {}",
            "current-context: stand-in",
            ""));
  }

  @Override
  public void close() {
    exec.close();
    server.destroy();
  }
}
