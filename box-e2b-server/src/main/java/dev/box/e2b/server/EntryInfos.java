package dev.box.e2b.server;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigDecimal;
import java.time.Instant;

/**
 * envd's {@code EntryInfo} messages, in proto3 JSON, from what the {@code entries} function of the
 * filesystem scripts prints: eight NUL-terminated fields per entry (type, size, octal mode, owner,
 * group, mtime, link target, path).
 */
final class EntryInfos {
  private static final int FIELDS = 8;

  private final ObjectMapper mapper;

  EntryInfos(ObjectMapper mapper) {
    this.mapper = mapper;
  }

  /** Every entry in {@code printed}. */
  ArrayNode all(String printed) {
    ArrayNode entries = mapper.createArrayNode();
    if (printed.isEmpty()) {
      return entries;
    }
    String[] fields = printed.split("\0", -1);
    // The output ends with a NUL, so the split ends with one empty string.
    for (int i = 0; i + FIELDS < fields.length; i += FIELDS) {
      entries.add(entry(fields, i));
    }
    return entries;
  }

  /** The one entry in {@code printed}. */
  ObjectNode one(String printed) {
    ArrayNode entries = all(printed);
    if (entries.isEmpty()) {
      throw new ConnectError("internal", "the sandbox printed no entry");
    }
    return (ObjectNode) entries.get(0);
  }

  private ObjectNode entry(String[] f, int at) {
    String path = f[at + 7];
    int mode = Integer.parseInt(f[at + 2], 8);
    ObjectNode node = mapper.createObjectNode();
    int slash = path.lastIndexOf('/');
    node.put("name", path.equals("/") || slash < 0 ? path : path.substring(slash + 1));
    node.put("type", type(f[at]));
    node.put("path", path);
    node.put("size", f[at + 1]);
    node.put("mode", mode);
    node.put("permissions", permissions(f[at].charAt(0), mode));
    node.put("owner", f[at + 3]);
    node.put("group", f[at + 4]);
    node.put("modifiedTime", modified(f[at + 5]));
    if (!f[at + 6].isEmpty()) {
      node.put("symlinkTarget", f[at + 6]);
    }
    return node;
  }

  private static String type(String find) {
    return switch (find) {
      case "f" -> "FILE_TYPE_FILE";
      case "d" -> "FILE_TYPE_DIRECTORY";
      case "l" -> "FILE_TYPE_SYMLINK";
      default -> "FILE_TYPE_UNSPECIFIED";
    };
  }

  /** As {@code ls -l} shows them: the type letter, then rwx three times. */
  private static String permissions(char type, int mode) {
    StringBuilder text = new StringBuilder().append(type == 'f' ? '-' : type);
    String letters = "rwxrwxrwx";
    for (int bit = 0; bit < 9; bit++) {
      text.append((mode & (1 << (8 - bit))) != 0 ? letters.charAt(bit) : '-');
    }
    return text.toString();
  }

  /** find's {@code %T@} (seconds with a fraction) as an RFC 3339 timestamp. */
  private static String modified(String seconds) {
    BigDecimal value = new BigDecimal(seconds);
    long whole = value.longValue();
    long nanos = value.subtract(BigDecimal.valueOf(whole)).movePointRight(9).longValue();
    return Instant.ofEpochSecond(whole, nanos).toString();
  }
}
