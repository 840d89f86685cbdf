package dev.vigil.deploy;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A scrape in the Prometheus text format, as series: the name of each sample line ({@code
 * x_bucket}, {@code x_sum} and {@code x_count} of a histogram are their own names, as Prometheus
 * stores them) and its labels.
 */
public record Scrape(Map<String, List<Map<String, String>>> series) {

  public static Scrape parse(String text) {
    Map<String, List<Map<String, String>>> series = new TreeMap<>();
    for (String line : text.split("\n")) {
      line = line.strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      int brace = line.indexOf('{');
      int space = line.indexOf(' ');
      String name;
      Map<String, String> labels = new LinkedHashMap<>();
      if (brace >= 0 && (space < 0 || brace < space)) {
        name = line.substring(0, brace);
        parseLabels(line, brace + 1, labels);
      } else if (space > 0) {
        name = line.substring(0, space);
      } else {
        throw new IllegalArgumentException("not a sample line: " + line);
      }
      series.computeIfAbsent(name, n -> new ArrayList<>()).add(labels);
    }
    return new Scrape(series);
  }

  private static void parseLabels(String line, int i, Map<String, String> labels) {
    while (i < line.length() && line.charAt(i) != '}') {
      int eq = line.indexOf('=', i);
      String label = line.substring(i, eq).strip();
      if (line.charAt(eq + 1) != '"') {
        throw new IllegalArgumentException("unquoted label value in " + line);
      }
      StringBuilder value = new StringBuilder();
      int j = eq + 2;
      while (line.charAt(j) != '"') {
        char c = line.charAt(j);
        if (c == '\\') {
          char e = line.charAt(++j);
          value.append(e == 'n' ? '\n' : e);
        } else {
          value.append(c);
        }
        j++;
      }
      labels.put(label, value.toString());
      i = j + 1;
      if (i < line.length() && line.charAt(i) == ',') {
        i++;
      }
    }
  }

  public boolean has(String metric) {
    return series.containsKey(metric);
  }

  /** Whether some series of {@code metric} carries {@code label}. */
  public boolean hasLabel(String metric, String label) {
    return series.getOrDefault(metric, List.of()).stream().anyMatch(s -> s.containsKey(label));
  }

  /** Whether some series of {@code metric} has {@code label} equal to {@code value}. */
  public boolean hasValue(String metric, String label, String value) {
    return series.getOrDefault(metric, List.of()).stream()
        .anyMatch(s -> value.equals(s.get(label)));
  }
}
