package dev.box.client;

/** Receives what a {@link Terminal} writes, in order, on the connection's thread. */
@FunctionalInterface
public interface TerminalOutput {
  /**
   * Fires for each part of the terminal's output as it arrives; the next part waits until this
   * returns, so that a slow consumer slows the terminal rather than piling up its output.
   */
  void output(byte[] bytes);
}
