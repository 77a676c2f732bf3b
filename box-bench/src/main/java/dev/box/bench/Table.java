package dev.box.bench;

import java.util.ArrayList;
import java.util.List;

/** A table of text cells, rendered as aligned plain text or as Markdown. */
final class Table {
  private final List<String> header;
  private final boolean[] left;
  private final List<List<String>> rows = new ArrayList<>();

  /** A table whose first column is left-aligned and the others right-aligned. */
  Table(String... header) {
    this.header = List.of(header);
    this.left = new boolean[header.length];
    left[0] = true;
  }

  /** Left-aligns the column {@code index} (counted from 0). */
  Table alignLeft(int index) {
    left[index] = true;
    return this;
  }

  /** Adds a row; it must have as many cells as the header. */
  Table row(String... cells) {
    if (cells.length != header.size()) {
      throw new IllegalArgumentException(
          "a row needs " + header.size() + " cells, not " + cells.length);
    }
    rows.add(List.of(cells));
    return this;
  }

  /** The columns aligned, two spaces apart. */
  String text() {
    int[] widths = new int[header.size()];
    for (List<String> row : all()) {
      for (int c = 0; c < row.size(); c++) {
        widths[c] = Math.max(widths[c], row.get(c).length());
      }
    }
    StringBuilder out = new StringBuilder();
    for (List<String> row : all()) {
      StringBuilder line = new StringBuilder();
      for (int c = 0; c < row.size(); c++) {
        line.append(c == 0 ? "" : "  ").append(pad(row.get(c), widths[c], left[c]));
      }
      out.append(line.toString().stripTrailing()).append('\n');
    }
    return out.toString();
  }

  /** A GitHub-flavoured Markdown table with the same alignment. */
  String markdown() {
    StringBuilder out = new StringBuilder();
    out.append(markdownRow(header));
    List<String> rule = new ArrayList<>();
    for (boolean leftAligned : left) {
      rule.add(leftAligned ? "---" : "---:");
    }
    out.append(markdownRow(rule));
    rows.forEach(row -> out.append(markdownRow(row)));
    return out.toString();
  }

  private List<List<String>> all() {
    List<List<String>> all = new ArrayList<>();
    all.add(header);
    all.addAll(rows);
    return all;
  }

  private static String markdownRow(List<String> cells) {
    return "| "
        + String.join(" | ", cells.stream().map(c -> c.replace("|", "\\|")).toList())
        + " |\n";
  }

  private static String pad(String cell, int width, boolean leftAligned) {
    String space = " ".repeat(width - cell.length());
    return leftAligned ? cell + space : space + cell;
  }
}
