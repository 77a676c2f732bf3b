package dev.box.server.http;

import java.util.function.LongConsumer;

/**
 * Where a relay counts the bytes it moves: {@code stdin} is told of the bytes written to a
 * process's stdin, {@code stdout} of the bytes of its stdout delivered to the client (a line's
 * newline included, though line mode sends it as a frame boundary).
 */
record RelayMeter(LongConsumer stdin, LongConsumer stdout) {

  /** Counts nothing: metrics are off. */
  static final RelayMeter NONE = new RelayMeter(bytes -> {}, bytes -> {});
}
