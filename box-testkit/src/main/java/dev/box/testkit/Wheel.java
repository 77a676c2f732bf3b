package dev.box.testkit;

import dev.box.testclient.ZipBytes;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A tiny pure-Python wheel, made by hand (a wheel is a zip with a dist-info directory), so that a
 * sandbox can {@code pip install} a package without a network or a build backend.
 */
final class Wheel {
  /** The wheel's file name. */
  static final String FILE = "boxprobe-1.0-py3-none-any.whl";

  /** What {@code boxprobe.VALUE} holds once installed. */
  static final String VALUE = "wheel-installed";

  private Wheel() {}

  /** Writes the wheel into {@code dir}, readable by everyone, and returns its path. */
  static Path write(Path dir) throws IOException {
    Map<String, String> files = new LinkedHashMap<>();
    files.put("boxprobe/__init__.py", "VALUE = '" + VALUE + "'\n");
    files.put(
        "boxprobe-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: boxprobe\nVersion: 1.0\n");
    files.put(
        "boxprobe-1.0.dist-info/WHEEL",
        "Wheel-Version: 1.0\nGenerator: box-testkit\nRoot-Is-Purelib: true\nTag: py3-none-any\n");
    StringBuilder record = new StringBuilder();
    files.forEach(
        (name, text) -> {
          byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
          record.append(name).append(",sha256=").append(digest(bytes));
          record.append(',').append(bytes.length).append('\n');
        });
    record.append("boxprobe-1.0.dist-info/RECORD,,\n");
    files.put("boxprobe-1.0.dist-info/RECORD", record.toString());

    Path wheel = dir.resolve(FILE);
    Files.write(wheel, ZipBytes.of(files));
    Files.setPosixFilePermissions(wheel, PosixFilePermissions.fromString("rw-r--r--"));
    return wheel;
  }

  private static String digest(byte[] bytes) {
    try {
      byte[] hash = MessageDigest.getInstance("SHA-256").digest(bytes);
      return Base64.getUrlEncoder().withoutPadding().encodeToString(hash);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is always present", e);
    }
  }
}
