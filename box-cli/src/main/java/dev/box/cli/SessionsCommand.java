package dev.box.cli;

import dev.box.api.BoxSessionInfo;
import dev.box.client.BoxClient;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code box sessions}: the live sessions, as a table or as JSON. */
@Command(name = "sessions", description = "Lists the live sessions.")
final class SessionsCommand extends ClientCommand {

  @Option(names = "--json", description = "Print the server's JSON instead of a table.")
  private boolean json;

  @Override
  int run(BoxClient client) {
    List<BoxSessionInfo> sessions = client.sessions();
    if (json) {
      Json.print(out(), sessions);
      return 0;
    }
    TextTable table =
        new TextTable(
            "SESSION", "BACKEND", "STATE", "NETWORK", "PERSISTENT", "CREATED", "LAST USED");
    for (BoxSessionInfo s : sessions) {
      table.row(
          s.sessionId(),
          s.backendName(),
          s.state().wireName(),
          s.network().wireName(),
          s.persistent() ? "yes" : "no",
          seconds(s.createdAt()),
          seconds(s.lastUsedAt()));
    }
    table.print(out());
    return 0;
  }

  private static String seconds(Instant instant) {
    return instant.truncatedTo(ChronoUnit.SECONDS).toString();
  }
}
