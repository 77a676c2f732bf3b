package dev.box.server.http;

/** What a client's relay WebSocket is attached to: a process here, or the replica that holds it. */
interface RelayEnd {
  /** A TEXT frame from the client. */
  void onText(String text);

  /** A BINARY frame from the client. */
  void onBinary(byte[] bytes);

  /** The client went away. */
  void stop();
}
