package dev.box.langbot;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * The front matter of a {@code SKILL.md}: an optional block between two {@code ---} lines that
 * holds {@code name}, {@code display_name} and {@code description}; what follows it is the skill's
 * instructions.
 *
 * <p>The block is read by a small, strict subset of YAML (the subset LangBot's runtime writes): one
 * {@code key: value} per line, values plain, single- or double-quoted or block scalars ({@code |},
 * {@code >}), continued on indented lines. Keys other than the three are skipped with their
 * indented lines. Anything else is refused, so a file this parser cannot read is never
 * half-understood.
 */
final class SkillFrontMatter {
  /** The keys kept from a front matter, in the order they are written. */
  static final List<String> FIELDS = List.of("name", "display_name", "description");

  private static final Pattern KEY_LINE = Pattern.compile("^([A-Za-z_][A-Za-z0-9_-]*)\\s*:(.*)$");
  private static final Pattern PLAIN_SAFE =
      Pattern.compile("[A-Za-z0-9_][A-Za-z0-9 _.,;()/+=@&!?%*'-]*");

  private SkillFrontMatter() {}

  /**
   * A parsed {@code SKILL.md}.
   *
   * @param metadata the front matter's values of {@link #FIELDS} that are not null
   * @param instructions the text after the front matter, leading newlines removed
   */
  record Parsed(Map<String, String> metadata, String instructions) {
    Parsed {
      metadata = Map.copyOf(metadata);
    }
  }

  /**
   * Splits {@code content} into front matter and instructions; content without a front matter is
   * all instructions.
   *
   * @throws IllegalArgumentException when the front matter is not the YAML subset described above
   */
  static Parsed parse(String content) {
    if (!content.startsWith("---")) {
      return new Parsed(Map.of(), content);
    }
    List<String> lines = content.lines().toList();
    if (lines.isEmpty() || !lines.get(0).strip().equals("---")) {
      return new Parsed(Map.of(), content);
    }
    int offset = lines.get(0).length() + lineBreakLength(content, lines.get(0).length());
    for (int i = 1; i < lines.size(); i++) {
      String line = lines.get(i);
      int end = offset + line.length();
      int next = end + lineBreakLength(content, end);
      if (line.strip().equals("---")) {
        Map<String, String> metadata = mapping(lines.subList(1, i));
        String rest = content.substring(Math.min(next, content.length()));
        return new Parsed(metadata, stripLeadingNewlines(rest));
      }
      offset = next;
    }
    return new Parsed(Map.of(), content);
  }

  /**
   * The {@code SKILL.md} text for {@code metadata} and {@code instructions}: a front matter with
   * the non-blank values of {@link #FIELDS}, or the instructions alone when there is none.
   */
  static String build(Map<String, @Nullable String> metadata, String instructions) {
    StringBuilder front = new StringBuilder();
    for (String key : FIELDS) {
      String value = metadata.get(key);
      if (value != null && !value.isBlank()) {
        front.append(key).append(": ").append(scalar(value)).append('\n');
      }
    }
    if (front.isEmpty()) {
      return instructions;
    }
    return "---\n" + front + "---\n\n" + instructions;
  }

  private static int lineBreakLength(String content, int at) {
    if (at >= content.length()) {
      return 0;
    }
    if (content.charAt(at) == '\r') {
      return at + 1 < content.length() && content.charAt(at + 1) == '\n' ? 2 : 1;
    }
    return 1;
  }

  private static String stripLeadingNewlines(String text) {
    int start = 0;
    while (start < text.length() && text.charAt(start) == '\n') {
      start++;
    }
    return text.substring(start);
  }

  private static Map<String, String> mapping(List<String> lines) {
    Map<String, String> values = new LinkedHashMap<>();
    int i = 0;
    while (i < lines.size()) {
      String line = lines.get(i);
      if (line.isBlank() || line.stripLeading().startsWith("#")) {
        i++;
        continue;
      }
      Matcher key = KEY_LINE.matcher(line);
      if (!key.matches()) {
        throw new IllegalArgumentException(
            "Skill front matter line " + (i + 2) + " is not a 'key: value' line");
      }
      List<String> continuation = new ArrayList<>();
      int j = i + 1;
      while (j < lines.size()
          && (lines.get(j).isBlank() || Character.isWhitespace(lines.get(j).charAt(0)))) {
        continuation.add(lines.get(j));
        j++;
      }
      while (!continuation.isEmpty() && continuation.getLast().isBlank()) {
        continuation.removeLast();
      }
      String name = key.group(1);
      if (FIELDS.contains(name)) {
        if (values.containsKey(name)) {
          throw new IllegalArgumentException("Skill front matter repeats the key " + name);
        }
        String value = value(key.group(2).strip(), continuation, name);
        if (value != null) {
          values.put(name, value);
        }
      }
      i = j;
    }
    return values;
  }

  private static @Nullable String value(String first, List<String> continuation, String key) {
    if (first.startsWith("|") || first.startsWith(">")) {
      return block(first, continuation, key);
    }
    StringBuilder joined = new StringBuilder(first);
    for (String line : continuation) {
      String part = line.strip();
      if (part.isEmpty()) {
        joined.append('\n');
      } else {
        if (!joined.isEmpty() && joined.charAt(joined.length() - 1) != '\n') {
          joined.append(' ');
        }
        joined.append(part);
      }
    }
    String text = joined.toString();
    if (text.startsWith("\"")) {
      return doubleQuoted(text, key);
    }
    if (text.startsWith("'")) {
      if (text.length() < 2 || !text.endsWith("'")) {
        throw unreadable(key);
      }
      String inner = text.substring(1, text.length() - 1);
      if (inner.replace("''", "").contains("'")) {
        throw unreadable(key);
      }
      return inner.replace("''", "'");
    }
    int comment = text.indexOf(" #");
    if (comment >= 0) {
      text = text.substring(0, comment).strip();
    }
    if (text.isEmpty() || text.equals("~") || text.equals("null") || text.equals("Null")) {
      return null;
    }
    if (text.startsWith("[") || text.startsWith("{") || text.startsWith("&")) {
      throw unreadable(key);
    }
    return text;
  }

  private static String block(String header, List<String> continuation, String key) {
    boolean literal = header.startsWith("|");
    String chomp = header.substring(1).strip();
    if (!chomp.isEmpty() && !chomp.equals("-") && !chomp.equals("+")) {
      throw unreadable(key);
    }
    int indent = Integer.MAX_VALUE;
    for (String line : continuation) {
      if (!line.isBlank()) {
        indent = Math.min(indent, line.length() - line.stripLeading().length());
      }
    }
    StringBuilder text = new StringBuilder();
    boolean previousBlank = true;
    for (String line : continuation) {
      String part = line.isBlank() ? "" : line.substring(indent);
      if (literal || part.isEmpty() || previousBlank) {
        text.append(text.isEmpty() && part.isEmpty() ? "" : "\n").append(part);
      } else {
        text.append(' ').append(part);
      }
      previousBlank = part.isEmpty();
    }
    String body = text.length() > 0 && text.charAt(0) == '\n' ? text.substring(1) : text.toString();
    return chomp.equals("-") ? body : body + "\n";
  }

  private static String doubleQuoted(String text, String key) {
    StringBuilder out = new StringBuilder();
    int i = 1;
    while (i < text.length()) {
      char c = text.charAt(i);
      if (c == '"') {
        if (i != text.length() - 1) {
          throw unreadable(key);
        }
        return out.toString();
      }
      if (c != '\\') {
        out.append(c);
        i++;
        continue;
      }
      if (i + 1 >= text.length()) {
        throw unreadable(key);
      }
      char e = text.charAt(i + 1);
      i += 2;
      switch (e) {
        case '"', '\\', '/' -> out.append(e);
        case 'n' -> out.append('\n');
        case 't' -> out.append('\t');
        case 'r' -> out.append('\r');
        case 'b' -> out.append('\b');
        case 'f' -> out.append('\f');
        case '0' -> out.append('\0');
        case ' ' -> out.append(' ');
        case 'x', 'u', 'U' -> {
          int digits = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          if (i + digits > text.length()) {
            throw unreadable(key);
          }
          try {
            out.appendCodePoint(Integer.parseInt(text.substring(i, i + digits), 16));
          } catch (IllegalArgumentException bad) {
            throw unreadable(key);
          }
          i += digits;
        }
        default -> throw unreadable(key);
      }
    }
    throw unreadable(key);
  }

  /** A plain scalar when that reads back unchanged, else a double-quoted one with escapes. */
  private static String scalar(String value) {
    if (PLAIN_SAFE.matcher(value).matches()
        && !value.endsWith(" ")
        && !value.equals("null")
        && !value.equals("Null")) {
      return value;
    }
    StringBuilder out = new StringBuilder("\"");
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\t' -> out.append("\\t");
        case '\r' -> out.append("\\r");
        default -> {
          if (c < 0x20 || c == 0x7f) {
            out.append(String.format("\\x%02x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    return out.append('"').toString();
  }

  private static IllegalArgumentException unreadable(String key) {
    return new IllegalArgumentException("Skill front matter value of " + key + " is not readable");
  }
}
