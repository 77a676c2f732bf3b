package dev.box.e2b.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.box.api.BoxException;
import dev.box.api.BoxForkRequest;
import dev.box.api.BoxSpec;
import java.util.Set;

/**
 * E2B's fork of a sandbox: each fork is a new sandbox (its own id, access token and record, the
 * source's template, metadata and environment) whose session is a Box fork of the source's, so its
 * workspace starts as a copy of the source's at that instant. No process is copied. Each fork
 * succeeds or fails on its own, as E2B reports them.
 *
 * @param sandboxes the sandboxes
 * @param views the shapes of the answer
 */
record SandboxForks(E2bSandboxes sandboxes, SandboxViews views) {
  /** The most forks one request makes. */
  static final int MAX_COUNT = 10;

  /** The seconds a fork lives when the request names no timeout, as E2B's default. */
  static final long DEFAULT_TIMEOUT = 15;

  private static final Set<String> FIELDS = Set.of("timeout", "count");

  /**
   * Forks {@code source} as the body asks ({@code count} 1 to {@link #MAX_COUNT}, 1 when absent;
   * {@code timeout} in seconds) and returns E2B's {@code SandboxForkResult} of each.
   *
   * @throws ApiError 400 for a bad body
   */
  ArrayNode fork(E2bSandbox source, JsonNode body) {
    CreateRequest.requireFields(body, FIELDS);
    long timeout = CreateRequest.timeout(body.path("timeout"), DEFAULT_TIMEOUT);
    JsonNode count = body.path("count");
    int forks = count.isMissingNode() || count.isNull() ? 1 : count.asInt(-1);
    if (!(count.isMissingNode() || count.isNull())
        && (!count.isIntegralNumber() || forks < 1 || forks > MAX_COUNT)) {
      throw ApiError.badRequest("count must be a whole number from 1 to " + MAX_COUNT);
    }
    ArrayNode results = views.mapper().createArrayNode();
    for (int i = 0; i < forks; i++) {
      results.add(forkOne(source, timeout));
    }
    return results;
  }

  private ObjectNode forkOne(E2bSandbox source, long timeout) {
    String sandboxId = Secrets.sandboxId();
    BoxSpec spec =
        source.spec().toBuilder()
            .sessionId(E2bSandbox.sessionIdOf(sandboxId))
            .fromSnapshot(null)
            .build();
    ObjectNode result = views.mapper().createObjectNode();
    try {
      sandboxes
          .sessions()
          .forks()
          .fork(source.sessionId(), new BoxForkRequest(spec.sessionId(), true));
    } catch (BoxException e) {
      ObjectNode error = result.putObject("error");
      error.put("code", e.code().httpStatus());
      error.put("message", String.valueOf(e.getMessage()));
      return result;
    }
    E2bSandbox fork =
        E2bSandbox.start(
            sandboxId,
            spec,
            sandboxes.now(),
            timeout,
            source.templateId(),
            source.metadata(),
            source.envVars());
    sandboxes.add(fork);
    source.log().info(sandboxes.now(), "sandbox forked as " + sandboxId);
    result.set("sandbox", views.created(fork));
    return result;
  }
}
