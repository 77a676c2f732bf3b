package dev.box.server;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The samples of one scrape in Prometheus' text format, parsed as a scraper would: each sample is a
 * name, its labels and a value; comments are skipped.
 */
record PrometheusText(List<Sample> samples) {
  private static final Pattern LINE =
      Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)})?\\s+(\\S+)(?:\\s+\\S+)?$");
  private static final Pattern LABEL =
      Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

  /** One sample. */
  record Sample(String name, Map<String, String> labels, double value) {}

  static PrometheusText parse(String text) {
    List<Sample> samples = new ArrayList<>();
    for (String line : text.split("\n")) {
      if (line.isBlank() || line.startsWith("#")) {
        continue;
      }
      Matcher m = LINE.matcher(line);
      if (!m.matches()) {
        throw new IllegalArgumentException("not a sample line: " + line);
      }
      Map<String, String> labels = new LinkedHashMap<>();
      if (m.group(2) != null) {
        Matcher label = LABEL.matcher(m.group(2));
        while (label.find()) {
          labels.put(label.group(1), label.group(2));
        }
      }
      samples.add(new Sample(m.group(1), labels, Double.parseDouble(m.group(3))));
    }
    return new PrometheusText(List.copyOf(samples));
  }

  /**
   * The sum of the samples named {@code name} whose labels include {@code labels} (name, value,
   * name, value, ...); fails when there is none, since every series of the backend in use is
   * registered before its first event.
   */
  double value(String name, String... labels) {
    double sum = 0;
    boolean found = false;
    for (Sample sample : samples) {
      if (sample.name().equals(name) && matches(sample.labels(), labels)) {
        sum += sample.value();
        found = true;
      }
    }
    if (!found) {
      throw new AssertionError("no sample " + name + " " + List.of(labels) + " in the scrape");
    }
    return sum;
  }

  /** Every sample's labels of {@code name}, for checking which label values exist. */
  List<Map<String, String>> labelsOf(String name) {
    return samples.stream().filter(s -> s.name().equals(name)).map(Sample::labels).toList();
  }

  private static boolean matches(Map<String, String> have, String[] want) {
    for (int i = 0; i < want.length; i += 2) {
      if (!want[i + 1].equals(have.get(want[i]))) {
        return false;
      }
    }
    return true;
  }
}
