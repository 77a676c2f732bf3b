package dev.box.agenthost;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.box.api.BoxValidationException;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SessionIdTemplateTest {
  private static final SessionContext ALICE_IN_GROUP =
      new SessionContext("q-7", "group", "g-42", "alice", "c-3", Map.of());

  @Test
  void scopes_renderTheReferencePlaceholders() {
    assertThat(SessionIdTemplate.resolve(null, SessionIdTemplate.GLOBAL, ALICE_IN_GROUP))
        .isEqualTo("global");
    assertThat(SessionIdTemplate.resolve(null, SessionIdTemplate.PER_CONVERSATION, ALICE_IN_GROUP))
        .isEqualTo("group_g-42");
    assertThat(SessionIdTemplate.resolve(null, SessionIdTemplate.PER_USER, ALICE_IN_GROUP))
        .isEqualTo("group_g-42_alice");
    assertThat(SessionIdTemplate.resolve(null, SessionIdTemplate.PER_THREAD, ALICE_IN_GROUP))
        .isEqualTo("group_g-42_c-3");
    assertThat(SessionIdTemplate.resolve(null, "{query_id}", ALICE_IN_GROUP)).isEqualTo("q-7");
  }

  @Test
  void forcedTemplate_winsOverTheCallers() {
    assertThat(SessionIdTemplate.resolve("{global}", SessionIdTemplate.PER_USER, ALICE_IN_GROUP))
        .isEqualTo("global");
    assertThat(SessionIdTemplate.resolve("  ", SessionIdTemplate.PER_USER, ALICE_IN_GROUP))
        .as("a blank forced template is none")
        .isEqualTo("group_g-42_alice");
  }

  @Test
  void noTemplate_isPerConversation() {
    assertThat(SessionIdTemplate.resolve(null, null, ALICE_IN_GROUP)).isEqualTo("group_g-42");
    assertThat(SessionIdTemplate.resolve(null, "", ALICE_IN_GROUP)).isEqualTo("group_g-42");
  }

  @Test
  void missingIds_fallBackAsTheReferenceDoes() {
    SessionContext bare = new SessionContext(null, null, null, null, null, Map.of());
    assertThat(bare.variables())
        .containsEntry("query_id", "unknown")
        .containsEntry("launcher_type", "query")
        .containsEntry("launcher_id", "unknown")
        .containsEntry("sender_id", "unknown")
        .containsEntry("global", "global");
    SessionContext queryOnly = new SessionContext("q-1", null, null, null, null, Map.of());
    assertThat(SessionIdTemplate.resolve(null, SessionIdTemplate.PER_USER, queryOnly))
        .as("launcher_id falls back to query_id, sender_id to launcher_id")
        .isEqualTo("query_q-1_q-1");
  }

  @Test
  void unknownPlaceholders_renderAsUnknown_andExtraVariablesAreUsed() {
    assertThat(SessionIdTemplate.resolve(null, "agent-{agent_id}", ALICE_IN_GROUP))
        .isEqualTo("agent-unknown");
    assertThat(
            SessionIdTemplate.resolve(
                null, "agent-{agent_id}-{sender_id}", ALICE_IN_GROUP.with("agent_id", "coder")))
        .isEqualTo("agent-coder-alice");
  }

  @Test
  void doubledBraces_areLiteral_andUnmatchedOnesAreRefused() {
    assertThat(SessionIdTemplate.render("{{x}}_{global}", Map.of("global", "g")))
        .isEqualTo("{x}_g");
    assertThatThrownBy(() -> SessionIdTemplate.render("{global", Map.of()))
        .isInstanceOf(BoxValidationException.class)
        .hasMessage("session id template '{global' has an unmatched '{'");
    assertThatThrownBy(() -> SessionIdTemplate.render("global}", Map.of()))
        .isInstanceOf(BoxValidationException.class)
        .hasMessage("session id template 'global}' has an unmatched '}'");
  }
}
