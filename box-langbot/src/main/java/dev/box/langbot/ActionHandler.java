package dev.box.langbot;

import com.fasterxml.jackson.databind.JsonNode;
import org.jspecify.annotations.Nullable;

/** Answers one action request; {@link ActionDispatcher} is the real one. */
@FunctionalInterface
public interface ActionHandler {
  /**
   * Runs {@code action} and returns the response's {@code data}. Called on its own virtual thread;
   * may block. A thrown exception becomes an error response via {@link ErrorRendering}.
   *
   * @param action the wire name, for example {@code box_exec}
   * @param data the request's {@code data} object (empty when absent)
   * @param context the request's {@code context}, or null when absent
   */
  JsonNode handle(String action, JsonNode data, @Nullable JsonNode context) throws Exception;
}
