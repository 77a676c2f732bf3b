package dev.box.cli;

import dev.box.api.BoxSessionInfo;
import dev.box.client.BoxClient;
import java.util.function.BiFunction;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code box pause --session S} and {@code box resume --session S}: freeze or thaw every process of
 * a session, printing {@code <session> <state>}.
 */
final class PauseCommand {
  private PauseCommand() {}

  /** What both commands share: the session option, the call and the line printed. */
  abstract static class Change extends ClientCommand {
    @Option(
        names = "--session",
        paramLabel = "ID",
        required = true,
        description = "The session to act on.")
    private String session = "";

    private final BiFunction<BoxClient, String, BoxSessionInfo> change;

    Change(BiFunction<BoxClient, String, BoxSessionInfo> change) {
      this.change = change;
    }

    @Override
    int run(BoxClient client) {
      BoxSessionInfo info = change.apply(client, session);
      out().println(info.sessionId() + " " + info.state().wireName());
      out().flush();
      return 0;
    }
  }

  /** {@code box pause}. */
  @Command(
      name = "pause",
      description =
          "Freezes every process of a session: they keep their memory and use no CPU until the"
              + " session is resumed (box resume, or its next use).")
  static final class Pause extends Change {
    Pause() {
      super(BoxClient::pause);
    }
  }

  /** {@code box resume}. */
  @Command(name = "resume", description = "Thaws a paused session.")
  static final class Resume extends Change {
    Resume() {
      super(BoxClient::resume);
    }
  }
}
