package dev.box.core.files;

import java.io.IOException;
import java.io.OutputStream;

/**
 * A file or an archive being read out of a sandbox: its program has started and said that it exists
 * and how large it is, and its bytes wait to be copied. Close it in every case; closing before the
 * end kills the program.
 */
public interface FileDownload extends AutoCloseable {

  /**
   * The exact number of bytes {@link #transferTo} writes, or -1 when it is not known in advance (an
   * archive).
   */
  long size();

  /**
   * Copies the bytes to {@code out}, never more than the bound the server set.
   *
   * @throws IOException when the copy fails or is cut: the program failed, the file shrank, or the
   *     archive grew beyond the bound; what was written is then incomplete
   */
  void transferTo(OutputStream out) throws IOException;

  /** Ends the program if it still runs and releases it; idempotent. */
  @Override
  void close();
}
