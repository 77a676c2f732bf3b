package dev.box.client;

/**
 * Hears a streamed exec's output as the command writes it ({@link
 * BoxClient#exec(dev.box.api.BoxSpec, ExecOutput)}), in order, on the calling thread. Each stream
 * carries up to the server's {@code max_output_bytes}; the text is whole characters (a character
 * the command wrote in two pieces comes whole in the second).
 */
public interface ExecOutput {
  /** The next piece of the command's stdout. */
  void stdout(String text);

  /** The next piece of the command's stderr, Box's own notes (a timeout) included. */
  void stderr(String text);
}
