import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * Prints what a test run skipped and why, read from the Surefire and Failsafe reports under the
 * directory given (Maven prints counts, never reasons): one line per reason, with the test classes
 * it skipped. Run by scripts/test after Maven, as {@code java scripts/SkippedTests.java DIR}.
 */
class SkippedTests {
  private static final Pattern ASSERTJ =
      Pattern.compile("assumption was not met due to: \\[(.*)\\]\\s*");

  public static void main(String[] args) throws Exception {
    Path root = Path.of(args.length > 0 ? args[0] : ".");
    // reason -> test class -> how many of its tests
    Map<String, Map<String, Integer>> skipped = new TreeMap<>();
    for (Path report : reports(root)) {
      var factory = DocumentBuilderFactory.newInstance();
      factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
      NodeList cases =
          factory.newDocumentBuilder().parse(report.toFile()).getElementsByTagName("testcase");
      for (int i = 0; i < cases.getLength(); i++) {
        Element testCase = (Element) cases.item(i);
        NodeList skips = testCase.getElementsByTagName("skipped");
        if (skips.getLength() == 0) {
          continue;
        }
        Element skip = (Element) skips.item(0);
        String reason = skip.getAttribute("message").strip();
        if (reason.isEmpty()) {
          // Surefire puts an exception's message in the element's text, behind its type.
          reason = skip.getTextContent().strip();
          String type = skip.getAttribute("type");
          if (!type.isEmpty() && reason.startsWith(type + ":")) {
            reason = reason.substring(type.length() + 1).strip();
          }
          reason = firstLine(reason);
          // AssertJ's assumptions: "assumption was not met due to: [the reason]".
          Matcher assertj = ASSERTJ.matcher(reason);
          if (assertj.matches()) {
            reason = assertj.group(1);
          }
        }
        if (reason.isEmpty()) {
          reason = "(no reason given)";
        }
        String cls = testCase.getAttribute("classname");
        cls = cls.substring(cls.lastIndexOf('.') + 1);
        skipped
            .computeIfAbsent(firstLine(reason), r -> new TreeMap<>())
            .merge(cls, 1, Integer::sum);
      }
    }
    int total = skipped.values().stream().flatMap(m -> m.values().stream()).mapToInt(i -> i).sum();
    if (total == 0) {
      System.out.println("box: no test was skipped");
      return;
    }
    System.out.println("box: " + total + " test(s) skipped, and why:");
    skipped.forEach(
        (reason, classes) -> {
          List<String> named = new ArrayList<>();
          classes.forEach((cls, n) -> named.add(n == 1 ? cls : cls + " x" + n));
          System.out.println("box:   " + reason);
          System.out.println("box:     " + String.join(", ", named));
        });
  }

  private static String firstLine(String text) {
    String line = text.lines().findFirst().orElse(text);
    return line.length() > 300 ? line.substring(0, 300) + "..." : line;
  }

  private static List<Path> reports(Path root) throws IOException {
    try (Stream<Path> files = Files.walk(root, 4)) {
      return files
          .filter(p -> p.getFileName().toString().matches("TEST-.*\\.xml"))
          .filter(p -> p.getParent().getFileName().toString().matches("(surefire|failsafe)-reports"))
          .sorted()
          .toList();
    }
  }
}
