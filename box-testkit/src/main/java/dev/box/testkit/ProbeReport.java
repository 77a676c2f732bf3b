package dev.box.testkit;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What one run of probe.pl found: for each {@code address:port} it tried, {@code connected <first
 * line the peer sent>} or {@code failed <why>}.
 *
 * @param outcomes the outcome of each target, in the order they were asked for
 */
record ProbeReport(Map<String, String> outcomes) {
  ProbeReport {
    outcomes = Collections.unmodifiableMap(new LinkedHashMap<>(outcomes));
  }

  /**
   * Reads probe.pl's output; every target must have its line.
   *
   * @throws IllegalStateException when a target has none (the probe did not run as asked)
   */
  static ProbeReport parse(List<String> targets, String output) {
    Map<String, String> found = new LinkedHashMap<>();
    for (String line : output.lines().toList()) {
      int space = line.indexOf(' ');
      if (space > 0 && targets.contains(line.substring(0, space))) {
        found.put(line.substring(0, space), line.substring(space + 1));
      }
    }
    Map<String, String> ordered = new LinkedHashMap<>();
    for (String target : targets) {
      String outcome = found.get(target);
      if (outcome == null) {
        throw new IllegalStateException("the probe printed nothing for " + target + ": " + output);
      }
      ordered.put(target, outcome);
    }
    return new ProbeReport(ordered);
  }

  /** Whether a TCP connection to {@code target} was established. */
  boolean connected(String target) {
    return outcome(target).startsWith("connected");
  }

  /** The first line the peer at {@code target} sent, or empty. */
  String firstLine(String target) {
    String outcome = outcome(target);
    return outcome.startsWith("connected ") ? outcome.substring("connected ".length()) : "";
  }

  private String outcome(String target) {
    String outcome = outcomes.get(target);
    if (outcome == null) {
      throw new IllegalArgumentException(target + " was not probed; probed: " + outcomes.keySet());
    }
    return outcome;
  }

  @Override
  public String toString() {
    StringBuilder text = new StringBuilder();
    outcomes.forEach(
        (target, outcome) -> text.append("\n  ").append(target).append(' ').append(outcome));
    return text.toString();
  }
}
