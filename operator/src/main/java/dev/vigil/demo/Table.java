package dev.vigil.demo;

import java.util.List;

/** Columns padded to their widest cell, as kubectl prints them. */
final class Table {
  private Table() {}

  static String render(List<String[]> rows) {
    int columns = rows.get(0).length;
    int[] width = new int[columns];
    for (String[] row : rows) {
      for (int c = 0; c < columns; c++) {
        width[c] = Math.max(width[c], row[c].length());
      }
    }
    StringBuilder sb = new StringBuilder();
    for (String[] row : rows) {
      for (int c = 0; c < columns; c++) {
        sb.append(row[c]);
        if (c < columns - 1) {
          sb.append(" ".repeat(width[c] - row[c].length() + 2));
        }
      }
      sb.append('\n');
    }
    return sb.toString();
  }
}
