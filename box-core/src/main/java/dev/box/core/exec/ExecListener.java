package dev.box.core.exec;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * Hears an exec's output as the command writes it (a streaming exec), besides the bounded output
 * its result keeps. Each stream is heard from a thread of its own, so the two may call at once.
 */
public interface ExecListener {
  /** Hears nothing: an exec that answers only with its result. */
  ExecListener NONE =
      new ExecListener() {
        @Override
        public void started(Runnable end) {}

        @Override
        public void output(boolean stderr, byte[] bytes, int length) {}
      };

  /**
   * The command was started: whatever fails from now on, fails after it began.
   *
   * @param end ends the command and kills its tree, for a listener that learns it is gone otherwise
   *     than by a failed {@link #output}, such as a client that closed its connection while the
   *     command writes nothing
   */
  void started(Runnable end);

  /**
   * The next {@code length} bytes of the command's stdout, or of its stderr. A stream is heard up
   * to the exec's output limit; what follows is only counted, as in the result.
   *
   * @throws IOException when whoever listens is gone: the exec then ends, its tree killed
   */
  void output(boolean stderr, byte[] bytes, int length) throws IOException;

  /**
   * Passes a note of Box's on as stderr, where the result's stderr ends with it (a timeout, a used
   * up quota); a listener that is gone misses it, as it would the output.
   */
  default void note(String text) {
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    try {
      output(true, bytes, bytes.length);
    } catch (IOException e) {
      // Gone: nobody is left to tell.
    }
  }
}
