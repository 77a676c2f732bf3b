package dev.box.cli;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;

/** A plain-text table: columns as wide as their widest cell, two spaces apart. */
final class TextTable {
  private final List<List<String>> rows = new ArrayList<>();

  TextTable(String... header) {
    rows.add(List.of(header));
  }

  /** Adds a row; it must have as many cells as the header. */
  TextTable row(String... cells) {
    if (cells.length != rows.get(0).size()) {
      throw new IllegalArgumentException(
          "a row needs " + rows.get(0).size() + " cells, not " + cells.length);
    }
    rows.add(List.of(cells));
    return this;
  }

  void print(PrintWriter out) {
    int columns = rows.get(0).size();
    int[] widths = new int[columns];
    for (List<String> row : rows) {
      for (int i = 0; i < columns; i++) {
        widths[i] = Math.max(widths[i], row.get(i).length());
      }
    }
    for (List<String> row : rows) {
      StringBuilder line = new StringBuilder();
      for (int i = 0; i < columns; i++) {
        String cell = row.get(i);
        line.append(cell);
        if (i < columns - 1) {
          line.append(" ".repeat(widths[i] - cell.length() + 2));
        }
      }
      out.println(line);
    }
    out.flush();
  }
}
