package dev.box.testclient;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;

/** ZIP archives of text files, built in memory for a test to upload or write out. */
public final class ZipBytes {
  private ZipBytes() {}

  /**
   * A ZIP archive holding each of {@code files} (name to UTF-8 text), in the map's order; the names
   * are taken as given, so a test can put climbing paths in.
   *
   * @throws IOException when {@code ZipOutputStream} refuses an entry
   */
  public static byte[] of(Map<String, String> files) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ZipOutputStream out = new ZipOutputStream(bytes)) {
      for (Map.Entry<String, String> file : files.entrySet()) {
        out.putNextEntry(new ZipEntry(file.getKey()));
        out.write(file.getValue().getBytes(StandardCharsets.UTF_8));
        out.closeEntry();
      }
    }
    return bytes.toByteArray();
  }
}
