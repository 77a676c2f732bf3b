package dev.box.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every shell program Box runs passes shellcheck: the {@code .sh} resources under {@code
 * src/main/resources} of every module (what {@code dev.box.api.internal.ShellScript} loads and a
 * sandbox runs) and the scripts of {@code scripts/}. It lives in this module, late in the reactor,
 * because it checks the whole repository, not a module.
 *
 * <p>shellcheck is a Debian package {@code scripts/common.sh} installs with the other host tools,
 * so a missing shellcheck fails this test rather than skipping it: a run that did not check the
 * scripts must not look like one that did.
 */
class ShellcheckTest {
  private static final Path ROOT = repositoryRoot();

  @Test
  void everyShellProgram_passesShellcheck() throws Exception {
    Map<String, List<Path>> byDialect = new TreeMap<>();
    for (Path script : shellPrograms()) {
      byDialect.computeIfAbsent(dialect(script), d -> new ArrayList<>()).add(script);
    }
    List<String> findings = new ArrayList<>();
    for (Map.Entry<String, List<Path>> entry : byDialect.entrySet()) {
      findings.addAll(shellcheck(entry.getKey(), entry.getValue()));
    }
    assertThat(findings).as("shellcheck findings (file:line:column: level: finding)").isEmpty();
  }

  @Test
  void theScriptsChecked_includeTheSandboxProgramsOfEveryKind() {
    List<String> names = shellPrograms().stream().map(p -> ROOT.relativize(p).toString()).toList();
    assertThat(names)
        .contains(
            "box-core/src/main/resources/dev/box/core/backend/process-prelude.sh",
            "box-core/src/main/resources/dev/box/core/files/read.sh",
            "box-backend-e2b/src/main/resources/dev/box/backend/e2b/prepare-mounts.sh",
            "box-sandbox/src/main/resources/dev/box/sandbox/launcher.sh",
            "box-backend-docker/src/main/resources/dev/box/backend/docker/lease-holder.sh",
            "scripts/common.sh");
  }

  /** The resources ending in .sh under every module's src/main/resources, and scripts/. */
  private static List<Path> shellPrograms() {
    List<Path> found = new ArrayList<>();
    try (Stream<Path> modules = Files.list(ROOT)) {
      for (Path resources :
          modules.map(m -> m.resolve("src/main/resources")).filter(Files::isDirectory).toList()) {
        try (Stream<Path> files = Files.walk(resources)) {
          files
              .filter(f -> f.getFileName().toString().endsWith(".sh") && Files.isRegularFile(f))
              .forEach(found::add);
        }
      }
      try (Stream<Path> scripts = Files.list(ROOT.resolve("scripts"))) {
        scripts.filter(ShellcheckTest::isShellScript).forEach(found::add);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return found.stream().sorted().toList();
  }

  /** A regular file named *.sh or starting with a shebang for sh or bash. */
  private static boolean isShellScript(Path file) {
    if (!Files.isRegularFile(file)) {
      return false;
    }
    if (file.getFileName().toString().endsWith(".sh")) {
      return true;
    }
    String first = firstLine(file);
    return first.startsWith("#!") && (first.endsWith("/sh") || first.endsWith("bash"));
  }

  /** bash where the script says so (its shebang or a shellcheck shell directive), else sh. */
  private static String dialect(Path script) {
    try (Stream<String> lines = Files.lines(script, StandardCharsets.UTF_8)) {
      boolean bash =
          lines
              .limit(5)
              .anyMatch(
                  l ->
                      (l.startsWith("#!") && l.endsWith("bash"))
                          || l.matches("#\\s*shellcheck\\s+shell=bash\\s*"));
      return bash ? "bash" : "sh";
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static List<String> shellcheck(String dialect, List<Path> scripts) throws Exception {
    List<String> argv = new ArrayList<>(List.of("shellcheck", "-s", dialect, "-f", "gcc"));
    scripts.forEach(s -> argv.add(ROOT.relativize(s).toString()));
    Process process;
    try {
      process = new ProcessBuilder(argv).directory(ROOT.toFile()).redirectErrorStream(true).start();
    } catch (IOException e) {
      throw new AssertionError(
          "shellcheck is not installed: install the Debian package shellcheck (scripts/common.sh"
              + " does, as root), then run this test again",
          e);
    }
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("shellcheck ended").isTrue();
    List<String> findings = output.lines().filter(l -> !l.isBlank()).toList();
    if (process.exitValue() != 0) {
      assertThat(findings).as("shellcheck failed (exit %d)", process.exitValue()).isNotEmpty();
    }
    return findings;
  }

  private static String firstLine(Path file) {
    try (Stream<String> lines = Files.lines(file, StandardCharsets.ISO_8859_1)) {
      return lines.findFirst().orElse("").strip();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The directory of the parent pom: tests run in their module's directory. */
  private static Path repositoryRoot() {
    Path root = Path.of("").toAbsolutePath().getParent();
    if (root == null || !Files.isRegularFile(root.resolve("pom.xml"))) {
      throw new IllegalStateException("run from a module of the repository, not " + root);
    }
    return root;
  }
}
