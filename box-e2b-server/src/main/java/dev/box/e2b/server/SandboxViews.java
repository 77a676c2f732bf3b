package dev.box.e2b.server;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.box.api.BoxNetworkMode;
import dev.box.api.Cidr;

/**
 * The JSON shapes of E2B's control plane for a sandbox: {@code Sandbox} (create, connect), {@code
 * ListedSandbox} (list) and {@code SandboxDetail} (get).
 *
 * @param mapper makes the nodes
 */
record SandboxViews(ObjectMapper mapper) {
  /**
   * The envd version advertised: the SDK's file features up to it are served (the default user,
   * multipart and octet-stream uploads, gzip bodies); 0.6.2's file metadata is not, so the SDK
   * refuses it itself. See docs/E2B.md.
   */
  static final String ENVD_VERSION = "0.5.7";

  /** The client id every sandbox reports: Box has one tenant per server. */
  private static final String CLIENT_ID = "box";

  /** {@code Sandbox}: what create and connect answer, the access token among it. */
  ObjectNode created(E2bSandbox sandbox) {
    ObjectNode node = identity(sandbox);
    node.put("envdAccessToken", sandbox.accessToken());
    return node;
  }

  /** {@code ListedSandbox}, {@code paused} or running. */
  ObjectNode listed(E2bSandbox sandbox, boolean paused) {
    ObjectNode node = identity(sandbox);
    node.set("metadata", mapper.valueToTree(sandbox.metadata()));
    node.put("startedAt", sandbox.startedAt().toString());
    node.put("endAt", sandbox.endAt().toString());
    node.put("state", paused ? "paused" : "running");
    node.put("cpuCount", (int) Math.ceil(sandbox.spec().cpus()));
    node.put("memoryMB", sandbox.spec().memoryMb());
    node.put("diskSizeMB", sandbox.spec().workspaceQuotaMb());
    node.putArray("volumeMounts");
    return node;
  }

  /** The fields every shape starts with: the ids, the template and envd's version. */
  private ObjectNode identity(E2bSandbox sandbox) {
    ObjectNode node = mapper.createObjectNode();
    node.put("templateID", sandbox.templateId());
    node.put("sandboxID", sandbox.sandboxId());
    node.put("alias", sandbox.templateId());
    node.put("clientID", CLIENT_ID);
    node.put("envdVersion", ENVD_VERSION);
    return node;
  }

  /** {@code SandboxDetail}: the listed fields and the network. */
  ObjectNode detail(E2bSandbox sandbox, boolean paused) {
    ObjectNode node = listed(sandbox, paused);
    node.put("allowInternetAccess", sandbox.spec().network() == BoxNetworkMode.ON);
    ObjectNode network = node.putObject("network");
    sandbox.spec().egress().allowOut().stream()
        .map(Cidr::toString)
        .forEach(network.withArray("allowOut")::add);
    sandbox.spec().egress().denyOut().stream()
        .map(Cidr::toString)
        .forEach(network.withArray("denyOut")::add);
    ObjectNode lifecycle = node.putObject("lifecycle");
    lifecycle.put("onTimeout", "kill");
    lifecycle.put("autoResume", false);
    return node;
  }
}
