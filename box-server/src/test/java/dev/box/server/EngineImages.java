package dev.box.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.box.core.Hashes;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URLEncoder;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The images of a container engine, read from its API socket as any client of it would: what a test
 * checks a server left behind in the engine. One HTTP/1.0 request per question, so that the engine
 * answers with a plain body and closes.
 *
 * @param socket the engine's API socket
 */
record EngineImages(Path socket) {

  /** The engine of {@code DOCKER_SOCKET}, as {@link TestServer#docker()} uses. */
  static EngineImages docker() {
    return new EngineImages(
        Path.of(System.getenv().getOrDefault("DOCKER_SOCKET", "/var/run/docker.sock")));
  }

  /** The engine of {@code PODMAN_SOCKET}, as {@link TestServer#podman()} uses. */
  static EngineImages podman() {
    return new EngineImages(
        Path.of(System.getenv().getOrDefault("PODMAN_SOCKET", "/run/podman/podman.sock")));
  }

  /**
   * The tags of the images {@code box}'s data directory keeps as copies of containers' writable
   * roots (its repository {@code box-root-<hash of the state dir>}).
   */
  List<String> rootsOf(TestServer box) {
    Path stateDir = box.server.config().stateDir().toAbsolutePath().normalize();
    String repository = "box-root-" + Hashes.shortSha256(stateDir.toString());
    String filters = "{\"reference\":[\"" + repository + "\"]}";
    List<String> tags = new ArrayList<>();
    for (JsonNode image : get("/images/json?filters=" + encode(filters))) {
      image.path("RepoTags").forEach(tag -> tags.add(tag.asText()));
    }
    return tags;
  }

  private JsonNode get(String path) {
    try (SocketChannel channel = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
      String request = "GET /v1.41" + path + " HTTP/1.0\r\nHost: engine\r\n\r\n";
      channel.write(ByteBuffer.wrap(request.getBytes(StandardCharsets.US_ASCII)));
      ByteArrayOutputStream answer = new ByteArrayOutputStream();
      try (InputStream in = Channels.newInputStream(channel)) {
        in.transferTo(answer);
      }
      String text = answer.toString(StandardCharsets.UTF_8);
      int body = text.indexOf("\r\n\r\n");
      if (!text.startsWith("HTTP/1.") || !text.contains(" 200 ") || body < 0) {
        throw new IllegalStateException("the engine answered " + path + " with: " + text);
      }
      return TestServer.JSON.readTree(text.substring(body + 4));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String encode(String value) {
    return URLEncoder.encode(value, StandardCharsets.UTF_8);
  }
}
