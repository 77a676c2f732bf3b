package dev.box.backend.boxlite;

import static org.assertj.core.api.Assertions.assertThat;

import dev.box.core.backend.ProcessSpec;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxProcess;
import io.javalin.Javalin;
import io.javalin.websocket.WsContext;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A BoxLite server that answers the REST calls well and then sends hostile frames on the attach
 * socket: each is refused by closing the socket, what came before it is kept, and the process ends
 * as lost instead of taking the frame's word.
 */
class HostileFramesTest {
  @TempDir Path state;

  @Test
  void anOversizedTextFrame_endsTheProcessAsLost() throws Exception {
    assertLost(ws -> ws.send("{\"type\":\"error\",\"message\":\"" + "x".repeat(100_000) + "\"}"));
  }

  @Test
  void aFrameOnAnUnknownChannel_endsTheProcessAsLost() throws Exception {
    assertLost(ws -> ws.send(ByteBuffer.wrap(new byte[] {9, 'x'})));
  }

  @Test
  void anExitCodeOutOfRange_endsTheProcessAsLost() throws Exception {
    assertLost(ws -> ws.send("{\"type\":\"exit\",\"exit_code\":99999}"));
  }

  @Test
  void aTextFrameThatIsNotJson_endsTheProcessAsLost() throws Exception {
    assertLost(ws -> ws.send("exit 0"));
  }

  /** Runs a process whose server sends "ok" on stdout, then {@code hostile}, then a clean exit. */
  private void assertLost(Consumer<WsContext> hostile) throws Exception {
    Javalin server = hostileServer(hostile);
    try (BoxliteBackend backend =
        new BoxliteBackend(
            new BoxliteSettings("http://127.0.0.1:" + server.port(), "t", null), state, "i")) {
      Sandbox sandbox = backend.start(BoxliteBackendTest.spec("i", null, false));
      SandboxProcess process =
          sandbox.spawn(new ProcessSpec(new ProcessSpec.Shell("true"), "/", Map.of(), false));

      assertThat(process.waitFor(Duration.ofSeconds(60))).hasValue(BoxliteProcess.LOST);
      assertThat(new String(process.stdout().readAllBytes(), StandardCharsets.UTF_8))
          .isEqualTo("ok");
    } finally {
      server.stop();
    }
  }

  private static Javalin hostileServer(Consumer<WsContext> hostile) {
    String base = "/v1/boxes/bx1";
    String attach = base + "/executions/exec-1/attach";
    return Javalin.create(
            config -> {
              config.startup.showJavalinBanner = false;
              config.routes.get("/v1/me", ctx -> ctx.json(Map.of()));
              config.routes.post("/v1/boxes", ctx -> ctx.status(201).json(Map.of("box_id", "bx1")));
              config.routes.post(base + "/start", ctx -> ctx.json(Map.of("box_id", "bx1")));
              config.routes.delete(base, ctx -> ctx.status(204));
              config.routes.delete(base + "/executions/exec-1", ctx -> ctx.status(204));
              config.routes.post(
                  base + "/exec", ctx -> ctx.status(201).json(Map.of("execution_id", "exec-1")));
              config.routes.ws(
                  attach,
                  ws ->
                      ws.onConnect(
                          ctx -> {
                            ctx.send(ByteBuffer.wrap(new byte[] {1, 'o', 'k'}));
                            hostile.accept(ctx);
                            ctx.send(ByteBuffer.wrap(new byte[] {1, 'l', 'a', 't', 'e'}));
                            ctx.send("{\"type\":\"exit\",\"exit_code\":0}");
                          }));
            })
        .start("127.0.0.1", 0);
  }
}
