package dev.box.langbot;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.SequencedMap;
import org.jspecify.annotations.Nullable;

/**
 * A group of actions: each wire name, spelled once, with its handler, in the order they were added.
 * Tables are static so that the names are known without a dispatcher (a handler takes the object
 * that carries the action out as its first argument).
 *
 * @param <H> the handler type of the group
 */
final class ActionTable<H> {
  private final SequencedMap<String, H> handlers;

  private ActionTable(SequencedMap<String, H> handlers) {
    this.handlers = Collections.unmodifiableSequencedMap(new LinkedHashMap<>(handlers));
  }

  /** A builder of a table whose handlers are of type {@code H}. */
  static <H> Builder<H> builder() {
    return new Builder<>();
  }

  /** The names, in the order they were added. */
  List<String> names() {
    return List.copyOf(handlers.sequencedKeySet());
  }

  /** The handler of {@code name}, or null when the group has no such action. */
  @Nullable H handler(String name) {
    return handlers.get(name);
  }

  /** Builds an {@link ActionTable}. */
  static final class Builder<H> {
    private final SequencedMap<String, H> handlers = new LinkedHashMap<>();

    private Builder() {}

    /**
     * Adds the action {@code name}.
     *
     * @throws IllegalArgumentException when the name is taken
     */
    Builder<H> add(String name, H handler) {
      if (handlers.putIfAbsent(name, handler) != null) {
        throw new IllegalArgumentException("action " + name + " is added twice");
      }
      return this;
    }

    ActionTable<H> build() {
      return new ActionTable<>(handlers);
    }
  }
}
