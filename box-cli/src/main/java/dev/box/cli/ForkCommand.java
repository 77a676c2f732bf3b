package dev.box.cli;

import dev.box.api.BoxForkRequest;
import dev.box.api.BoxSessionInfo;
import dev.box.client.BoxClient;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code box fork --session S --to NEW}: starts a new session with a copy of a workspace. */
@Command(
    name = "fork",
    description =
        "Starts a new session with the spec of a session and a copy of its workspace at this"
            + " instant (no process is copied); prints <new session> <state>.")
final class ForkCommand extends ClientCommand {
  @Option(
      names = "--session",
      paramLabel = "ID",
      required = true,
      description = "The session to fork.")
  private String session = "";

  @Option(names = "--to", paramLabel = "NEW", required = true, description = "The new session.")
  private String to = "";

  @Option(names = "--persistent", description = "Keep the new session when idle and on restart.")
  private boolean persistent;

  @Override
  int run(BoxClient client) {
    BoxSessionInfo info = client.fork(session, new BoxForkRequest(to, persistent));
    out().println(info.sessionId() + " " + info.state().wireName());
    out().flush();
    return 0;
  }
}
