package dev.box.e2b.server;

import dev.box.api.BoxSpec;
import java.time.Instant;
import java.util.Map;

/**
 * What E2B's API knows of one sandbox beyond its Box session: the ids, the template, the caller's
 * metadata and environment, the envd access token and the lifetime. Immutable; a new end makes a
 * new record.
 *
 * @param sandboxId E2B's id, which the SDK sends back as {@code E2b-Sandbox-Id}
 * @param spec the spec of its Box session (the session's id among it)
 * @param templateId the template it was created from
 * @param metadata the caller's metadata, which the list filter matches
 * @param envVars the environment it was created with, served by envd's {@code /envs}
 * @param accessToken the envd access token every envd request must carry; never logged
 * @param startedAt when it was created
 * @param endAt when it is killed unless its timeout is set again
 * @param processes its running processes, the same table in every record of it
 * @param watches its directory watches, the same table in every record of it
 * @param log what Box saw happen to it, the same log in every record of it
 */
record E2bSandbox(
    String sandboxId,
    BoxSpec spec,
    String templateId,
    Map<String, String> metadata,
    Map<String, String> envVars,
    String accessToken,
    Instant startedAt,
    Instant endAt,
    ProcessTable processes,
    WatchTable watches,
    SandboxLog log) {

  /** Copies the maps. */
  E2bSandbox {
    metadata = Map.copyOf(metadata);
    envVars = Map.copyOf(envVars);
  }

  /**
   * A new sandbox {@code sandboxId} whose session has {@code spec}, started {@code now} and ending
   * {@code timeoutSeconds} later, made from {@code templateId} with {@code metadata} and {@code
   * envVars}; it has a new access token and empty tables.
   */
  static E2bSandbox start(
      String sandboxId,
      BoxSpec spec,
      Instant now,
      long timeoutSeconds,
      String templateId,
      Map<String, String> metadata,
      Map<String, String> envVars) {
    return new E2bSandbox(
        sandboxId,
        spec,
        templateId,
        metadata,
        envVars,
        Secrets.accessToken(),
        now,
        now.plusSeconds(timeoutSeconds),
        new ProcessTable(),
        new WatchTable(),
        new SandboxLog());
  }

  /** The id of the Box session of the sandbox {@code sandboxId}. */
  static String sessionIdOf(String sandboxId) {
    return "e2b-" + sandboxId;
  }

  /** The id of its Box session. */
  String sessionId() {
    return spec.sessionId();
  }

  /** This sandbox ending at {@code end}. */
  E2bSandbox endingAt(Instant end) {
    return new E2bSandbox(
        sandboxId,
        spec,
        templateId,
        metadata,
        envVars,
        accessToken,
        startedAt,
        end,
        processes,
        watches,
        log);
  }

  @Override
  public String toString() {
    return "E2bSandbox[" + sandboxId + ", session " + sessionId() + ", ends " + endAt + "]";
  }
}
