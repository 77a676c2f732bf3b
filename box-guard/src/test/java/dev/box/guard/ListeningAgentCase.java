package dev.box.guard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.box.guard.NetworkAgentClient.Control;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * The set-up of a test against a real agent in network mode ({@link ListeningAgent}): a fresh agent
 * for each test, a {@link NetworkAgentClient} to it, and everything opened closed in reverse after
 * the test (killing the agent kills what it left running: held orphans are its children).
 */
abstract class ListeningAgentCase {
  /** How long a test waits for what must come. */
  static final Duration GENEROUS = Duration.ofSeconds(30);

  @TempDir Path dir;

  /** The agent and every connection to it, closed in reverse after each test. */
  final List<AutoCloseable> opened = new ArrayList<>();

  NetworkAgentClient client = new NetworkAgentClient(0, new byte[32], opened);

  @BeforeEach
  void startAgent() throws Exception {
    ListeningAgent agent = ListeningAgent.start(dir);
    opened.add(agent);
    client = new NetworkAgentClient(agent.port(), agent.secret(), opened);
    await().atMost(GENEROUS).ignoreExceptions().until(this::greets);
  }

  @AfterEach
  void stop() throws Exception {
    for (AutoCloseable c : opened.reversed()) {
      c.close();
    }
  }

  /** Whether a new control gets its hello; it is closed again. */
  private boolean greets() throws IOException {
    Control control = client.control();
    try {
      return control.next().type() == 'H';
    } finally {
      control.close();
    }
  }

  /** A new control connection whose hello has been read. */
  Control helloed() throws IOException {
    Control control = client.control();
    assertThat(control.next().type()).isEqualTo('H');
    return control;
  }
}
