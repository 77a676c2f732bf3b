package dev.box.server.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.BoxManagedProcessInfo;
import io.javalin.http.Context;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The managed processes of a session that the other replicas hold ({@link Peers}): a process is
 * relayed by the replica that started it, so another replica lists them by asking each live one,
 * and answers a request for one with what the replica that holds it answers.
 *
 * <p>Each replica is asked with {@link Peers#FORWARDED}: a forwarded {@code GET /v1/sessions/{id}}
 * answers only the processes that replica holds ({@code managed_processes}), and a forwarded
 * request for one process answers from that replica alone (404 when it does not hold it), so that a
 * request crosses at most one replica and no session is adopted to answer it.
 *
 * @param peers the other replicas
 * @param mapper the mapper of their answers' JSON
 */
record PeerProcesses(Peers peers, ObjectMapper mapper) {
  private static final Logger log = LoggerFactory.getLogger(PeerProcesses.class);

  /** The processes of session {@code sessionId} the other live replicas hold. */
  List<BoxManagedProcessInfo> list(String sessionId) {
    List<BoxManagedProcessInfo> all = new ArrayList<>();
    for (URI peer : peers.urls().urls()) {
      HttpResponse<String> answer =
          peers.ask(peers.request(peer, Peers.sessionPath(sessionId)).GET().build());
      if (answer == null || answer.statusCode() != 200) {
        continue;
      }
      try {
        for (JsonNode process : mapper.readTree(answer.body()).path("managed_processes")) {
          all.add(mapper.treeToValue(process, BoxManagedProcessInfo.class));
        }
      } catch (JsonProcessingException e) {
        log.warn("replica {} listed processes unreadably: {}", peer.getAuthority(), e.toString());
      }
    }
    return all;
  }

  /**
   * The replica that holds process {@code processId} of session {@code sessionId}, or null when
   * none of the others does.
   *
   * @throws BoxException ({@code runtime_unavailable}) when none does but some advertise no URL to
   *     ask, and {@code strict}
   */
  @Nullable URI owner(String sessionId, String processId, boolean strict) {
    Peers.Found found = peers.urls();
    String path = Peers.sessionPath(sessionId, "managed-process", processId);
    for (URI peer : found.urls()) {
      HttpResponse<String> answer = peers.ask(peers.request(peer, path).GET().build());
      if (answer != null && answer.statusCode() == 200) {
        return peer;
      }
    }
    if (strict) {
      found.requireAllReachable("managed process " + processId + " of session " + sessionId);
    }
    return null;
  }

  /**
   * Answers {@code ctx} with what {@code owner} answers to the same {@code method} on {@code path}.
   */
  void proxy(Context ctx, URI owner, String method, String path) {
    HttpRequest request =
        peers.request(owner, path).method(method, HttpRequest.BodyPublishers.noBody()).build();
    HttpResponse<String> answer;
    try {
      answer = peers.send(request);
    } catch (IOException e) {
      throw new BoxException(
          BoxErrorCode.RUNTIME_UNAVAILABLE,
          "the replica that holds the managed process ("
              + owner.getRawAuthority()
              + ") does not answer: "
              + e);
    }
    ctx.status(answer.statusCode())
        .contentType(answer.headers().firstValue("Content-Type").orElse("application/json"))
        .result(answer.body());
  }

  /**
   * Stops process {@code processId} of session {@code sessionId} where another replica holds it: a
   * start replaces the process of that id wherever it runs, so that an id names one process.
   */
  void stopElsewhere(String sessionId, String processId) {
    URI owner = owner(sessionId, processId, false);
    if (owner != null) {
      String path = Peers.sessionPath(sessionId, "managed-process", processId);
      peers.ask(peers.request(owner, path).DELETE().build());
    }
  }
}
