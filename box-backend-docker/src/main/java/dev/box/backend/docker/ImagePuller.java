package dev.box.backend.docker;

import com.fasterxml.jackson.databind.JsonNode;
import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.sandbox.engine.EngineClient;
import dev.box.sandbox.engine.EnginePaths;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pulls an image the engine does not have, waiting at most the pull timeout; every failure is a
 * {@link BoxErrorCode#BACKEND_UNAVAILABLE} error that names the image.
 *
 * @param client the engine's API
 * @param engine {@code docker} or {@code podman}, for the log
 * @param timeout how long one pull may take
 */
record ImagePuller(EngineClient client, String engine, Duration timeout) {
  private static final Logger log = LoggerFactory.getLogger(ImagePuller.class);

  /**
   * Pulls {@code image}; returns once the engine has it.
   *
   * @throws BoxException when the pull fails, reports an error or times out
   */
  void pull(String image) {
    if (ContainerRoots.isCopy(image)) {
      // A copy of a writable root is made here, never fetched: a registry has none.
      throw new BoxException(
          BoxErrorCode.NOT_FOUND,
          "the copy of a writable root " + image + " is not present in " + engine);
    }
    log.info("image {} is not present in {}; pulling it", image, engine);
    String path = EnginePaths.pullImage(image);
    EngineClient.Response answer;
    try {
      answer = client.call("POST", path, null, timeout);
    } catch (SocketTimeoutException e) {
      throw new BoxException(
          BoxErrorCode.BACKEND_UNAVAILABLE,
          "image "
              + image
              + " is not present and pulling it timed out after "
              + timeout.toSeconds()
              + " s");
    } catch (IOException e) {
      throw new BoxException(
          BoxErrorCode.BACKEND_UNAVAILABLE,
          "image " + image + " is not present and cannot be pulled: " + e.getMessage());
    }
    String error = answer.ok() ? pullError(answer.body()) : answer.message();
    if (error != null) {
      throw new BoxException(
          BoxErrorCode.BACKEND_UNAVAILABLE,
          "image " + image + " is not present and cannot be pulled: " + oneLine(error));
    }
  }

  /** The error in a pull's progress stream (one JSON object per line), or null. */
  private static @Nullable String pullError(byte[] body) {
    for (String line : new String(body, StandardCharsets.UTF_8).split("\n")) {
      if (line.isBlank()) {
        continue;
      }
      JsonNode node = new EngineClient.Response(200, line.getBytes(StandardCharsets.UTF_8)).json();
      if (node.hasNonNull("error")) {
        return node.get("error").asText();
      }
      if (node.hasNonNull("errorDetail")) {
        return node.get("errorDetail").path("message").asText();
      }
    }
    return null;
  }

  private static String oneLine(String text) {
    String line = text.strip().replaceAll("\\s+", " ");
    return line.length() > 300 ? line.substring(0, 300) : line;
  }
}
