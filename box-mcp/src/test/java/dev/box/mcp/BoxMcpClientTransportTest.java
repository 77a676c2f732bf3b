package dev.box.mcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.box.api.BoxManagedProcessNotFoundException;
import dev.box.api.BoxManagedProcessSpec;
import dev.box.api.BoxSpec;
import dev.box.client.AttachOptions;
import dev.box.client.LiveBox;
import io.modelcontextprotocol.spec.McpSchema.JSONRPCMessage;
import io.modelcontextprotocol.spec.McpSchema.JSONRPCNotification;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.publisher.Mono;

/**
 * The transport's framing, against {@code cat} and {@code sh} in a real sandbox behind a real Box
 * server: what it sends comes back through stdout as the process wrote it.
 */
class BoxMcpClientTransportTest {
  @RegisterExtension static final LiveBox box = LiveBox.perClass();

  private final List<JSONRPCMessage> received = new CopyOnWriteArrayList<>();

  private BoxMcpClientTransport transportTo(TestInfo test, String command, String... args) {
    String session = test.getTestMethod().orElseThrow().getName();
    box.startInNewSession(session, BoxManagedProcessSpec.of(command, args));
    return BoxMcpClientTransport.builder(box.client(), session).build();
  }

  private Mono<Void> connect(BoxMcpClientTransport transport) {
    return transport.connect(messages -> messages.doOnNext(received::add));
  }

  /** Sends {@code message} to a process that echoes, which must give back it and nothing else. */
  private void assertSentMessage_comesBackAlone(
      BoxMcpClientTransport transport, JSONRPCMessage message) {
    transport.sendMessage(message).block(Duration.ofSeconds(10));

    await().atMost(Duration.ofSeconds(10)).until(() -> received.size() == 1);
    assertThat(received).containsExactly(message);
    transport.closeGracefully().block(Duration.ofSeconds(10));
  }

  @Test
  void eachMessage_travelsAsOneLine_evenWithLineBreaksInItsStrings(TestInfo test) {
    BoxMcpClientTransport transport = transportTo(test, "cat");
    connect(transport).block(Duration.ofSeconds(10));
    JSONRPCNotification message =
        new JSONRPCNotification("2.0", "notifications/message", Map.of("data", "two\nlines"));

    assertSentMessage_comesBackAlone(transport, message);
  }

  @Test
  void stdoutLinesThatAreNotJsonRpc_areSkipped(TestInfo test) {
    BoxMcpClientTransport transport =
        transportTo(test, "sh", "-c", "echo 'starting up...'; echo; cat");
    connect(transport).block(Duration.ofSeconds(10));
    JSONRPCNotification message = new JSONRPCNotification("2.0", "notifications/initialized", null);

    assertSentMessage_comesBackAlone(transport, message);
  }

  @Test
  void aTransportConnectsOnce(TestInfo test) {
    BoxMcpClientTransport transport = transportTo(test, "cat");
    connect(transport).block(Duration.ofSeconds(10));

    assertThatThrownBy(() -> connect(transport).block(Duration.ofSeconds(10)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("this transport is connected already; create a new one to connect again");
    transport.closeGracefully().block(Duration.ofSeconds(10));
  }

  @Test
  void connectingToAMissingProcess_failsWithTheServersError() {
    box.client().createSession(BoxSpec.builder("empty").build());
    BoxMcpClientTransport transport =
        BoxMcpClientTransport.builder(box.client(), "empty").processId("nope").build();

    assertThatThrownBy(() -> connect(transport).block(Duration.ofSeconds(10)))
        .isInstanceOf(BoxManagedProcessNotFoundException.class);
    assertThatThrownBy(
            () ->
                transport
                    .sendMessage(new JSONRPCNotification("2.0", "x", null))
                    .block(Duration.ofSeconds(10)))
        .isInstanceOf(BoxManagedProcessNotFoundException.class);
  }

  @Test
  void builder_refusesBytesDelivery_andBlankIds() {
    BoxMcpClientTransport.Builder builder = BoxMcpClientTransport.builder(box.client(), "s");

    assertThatThrownBy(
            () ->
                builder.attachOptions(
                    AttachOptions.defaults().withDelivery(AttachOptions.Delivery.BYTES)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "the MCP transport reads one message per line: attach options must deliver LINES,"
                + " not BYTES");
    assertThatThrownBy(() -> builder.processId(" ")).hasMessage("the process id must not be blank");
    assertThatThrownBy(() -> BoxMcpClientTransport.builder(box.client(), ""))
        .hasMessage("the session id must not be blank");
  }
}
