package dev.box.backend.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@code deploy/kubernetes/seccomp/box-sandbox.json}, the Localhost profile of network-off pods:
 * box-guard's own allowlist (read from {@code box-guard.c}, so that the two cannot drift apart)
 * plus exactly the namespace calls of {@code box-guard --net-off} and of the agent's keepers.
 */
class SeccompProfileTest {
  private static final long CLONE_NEWUSER = 0x10000000L;
  private static final long CLONE_NEWNET = 0x40000000L;

  private static JsonNode profile() throws Exception {
    return new ObjectMapper()
        .readTree(StandInKubelet.seccompProfiles().resolve("box-sandbox.json").toFile());
  }

  /** The calls box-guard.c allows unconditionally (its ALLOWED table). */
  private static Set<String> guardAllowed() throws Exception {
    Path source =
        StandInKubelet.seccompProfiles().resolve("../../../box-guard/src/main/c/box-guard.c");
    String c = Files.readString(source);
    int start = c.indexOf("ALLOWED[] = {");
    String table = c.substring(start, c.indexOf("};", start));
    Set<String> names = new TreeSet<>();
    Matcher m = Pattern.compile("\"([a-z0-9_]+)\"").matcher(table);
    while (m.find()) {
      names.add(m.group(1));
    }
    return names;
  }

  /** The rules for {@code name}. */
  private static List<JsonNode> rules(JsonNode profile, String name) {
    List<JsonNode> rules = new ArrayList<>();
    for (JsonNode rule : profile.get("syscalls")) {
      for (JsonNode n : rule.get("names")) {
        if (n.asText().equals(name)) {
          rules.add(rule);
        }
      }
    }
    return rules;
  }

  @Test
  void refusesByDefault_andAllowsUnconditionallyWhatBoxGuardAllows() throws Exception {
    JsonNode profile = profile();

    assertThat(profile.get("defaultAction").asText()).isEqualTo("SCMP_ACT_ERRNO");
    Set<String> unconditional = new TreeSet<>();
    for (JsonNode rule : profile.get("syscalls")) {
      if (rule.get("action").asText().equals("SCMP_ACT_ALLOW") && !rule.has("args")) {
        rule.get("names").forEach(n -> unconditional.add(n.asText()));
      }
    }
    assertThat(unconditional).isEqualTo(guardAllowed());
    assertThat(unconditional).doesNotContain("unshare", "setns", "mount", "ptrace", "clone");
  }

  @Test
  void allowsUnshareOfAUserAndNetworkNamespaceOnly_andSetnsOfThoseTwoTypes() throws Exception {
    JsonNode profile = profile();

    assertThat(rules(profile, "unshare"))
        .singleElement()
        .satisfies(
            r -> {
              assertThat(r.get("args")).hasSize(1);
              assertThat(r.get("args").get(0).get("index").asInt()).isZero();
              assertThat(r.get("args").get(0).get("op").asText()).isEqualTo("SCMP_CMP_EQ");
              assertThat(r.get("args").get(0).get("value").asLong())
                  .isEqualTo(CLONE_NEWUSER | CLONE_NEWNET);
            });
    assertThat(rules(profile, "setns"))
        .extracting(
            r ->
                r.get("args").get(0).get("index").asInt()
                    + " "
                    + r.get("args").get(0).get("op").asText()
                    + " "
                    + r.get("args").get(0).get("value").asLong())
        .containsExactlyInAnyOrder(
            "1 SCMP_CMP_EQ " + CLONE_NEWUSER, "1 SCMP_CMP_EQ " + CLONE_NEWNET);
  }
}
