package dev.box.backend.boxlite;

/** What the attach WebSocket of an execution delivered, decoded and checked. */
sealed interface AttachEvent {
  /** Output on stdout ({@code stderr} false) or stderr: a part of a binary message. */
  record Output(boolean stderr, byte[] bytes) implements AttachEvent {}

  /** The execution ended with {@code exitCode}. */
  record Exit(int exitCode) implements AttachEvent {}

  /** The socket ended: closed by the server, broken, or refused for what the server sent. */
  record Ended(String why) implements AttachEvent {}

  /** A frame that is no concern of the process (a non-fatal error report, an unknown type). */
  record Other(String what) implements AttachEvent {}
}
