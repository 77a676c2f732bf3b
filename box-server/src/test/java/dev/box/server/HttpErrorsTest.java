package dev.box.server;

import static dev.box.server.ErrorAnswers.assertError;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.box.testclient.Answer;
import java.util.Map;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Every client mistake gets a 4xx with a JSON error body, never a stack trace or a 500. */
class HttpErrorsTest {
  @AutoClose private static final TestServer box = TestServer.start();

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "{bad                          | malformed JSON",
        "[1,2]                         | request body must be a JSON object",
        "{\"timeout_sec\":\"soon\"}      | invalid value for timeout_sec",
        "{\"timeout_sec\":1.5}           | invalid value for timeout_sec",
        "{\"timeout_sec\":0}             | timeout_sec must be greater than 0",
        "{\"memory_mb\":16}              | memory_mb must be at least 32",
        "{\"network\":\"sometimes\"}     | network must be one of off, on",
        "{\"workdir\":\"tmp\"}           | workdir must be an absolute path inside the sandbox",
        "{\"mount_path\":\"/\"}          | mount_path / must be a normalised directory below /",
        "{\"env\":{\"A=B\":\"x\"}}       | env key 'A=B' is not a valid variable name",
        "{\"extra_mounts\":[{\"mount_path\":\"/m\"}] } | host_path is required",
        "{\"host_path\":\"/srv\",\"workdir\":\"/tmp\"} | workdir must stay under mount_path when"
            + " host_path is provided",
      })
  void badRequestBodies_areValidationErrors(String body, String message) {
    Answer a = box.post("/v1/sessions/bad/exec", body.replace("{\"", "{\"cmd\":\"true\",\""));

    assertError(a, 400, "validation_error").contains(message);
    assertThat(a.body().toString()).doesNotContain("at dev.box").doesNotContain("Exception");
  }

  @Test
  void unknownFields_areIgnored() {
    Answer a = box.exec("unknown", "echo ok", "\"future_field\":{\"x\":1}");

    assertThat(a.status()).isEqualTo(200);
    assertThat(a.text("stdout")).isEqualTo("ok\n");
  }

  @Test
  void unknownRoutesAndMethods_areJsonErrors() {
    Answer route = box.get("/v2/nothing");
    Answer method = box.send("PUT", "/v1/sessions/x", "{}");

    assertError(route, 404, "not_found");
    assertError(method, 405, "method_not_allowed");
  }

  @Test
  void missingSession_isSessionNotFound() {
    Answer a = box.get("/v1/sessions/nobody");

    assertError(a, 404, "session_not_found").isEqualTo("session nobody not found");
  }

  @Test
  void statusHealthAndProbes_describeTheRuntime() {
    Answer status = box.get("/v1/status");

    assertThat(status.body().path("backend").path("name").asText()).isEqualTo("bwrap");
    assertThat(status.body().path("session_ttl_sec").asInt()).isEqualTo(300);
    assertThat(status.body().path("limits").path("max_sessions").asInt()).isEqualTo(64);
    assertThat(status.body().has("active_sessions")).isTrue();
    assertThat(status.body().has("managed_processes")).isTrue();
    assertThat(box.get("/healthz").body().path("live").asBoolean()).isTrue();
    assertThat(box.get("/readyz").status()).isEqualTo(200);
  }

  @Test
  void aSeccompProfileThatCannotBeRead_isRefusedAtStartup() {
    assertThatThrownBy(
            () ->
                ServerConfig.resolve(
                    Map.of("seccomp_profile", "/nonexistent/profile.json"), Map.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("cannot read seccomp_profile /nonexistent/profile.json");
  }

  @Test
  void aSecondServerOnTheSameDataDir_isRefused() {
    ServerConfig config =
        ServerConfig.resolve(Map.of("port", "0", "data_dir", box.dataDir.toString()), Map.of());

    assertThatThrownBy(() -> BoxServer.start(config))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("is in use by another Box server");
  }
}
