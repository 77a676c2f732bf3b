package dev.box.cli;

import dev.box.api.BoxBackendHealth;
import dev.box.api.BoxRuntimeStatus;
import dev.box.client.BoxClient;
import java.io.PrintWriter;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code box status}: the server's backend, limits and sessions. */
@Command(name = "status", description = "Shows the server's backend, limits and sessions.")
final class StatusCommand extends ClientCommand {

  @Option(names = "--json", description = "Print the server's JSON.")
  private boolean json;

  @Override
  int run(BoxClient client) {
    BoxRuntimeStatus status = client.status();
    if (json) {
      Json.print(out(), status);
      return 0;
    }
    BoxBackendHealth backend = status.backend();
    PrintWriter out = out();
    line(out, "server", client.baseUri().toString());
    line(
        out,
        "backend",
        (backend.name() == null ? "none" : backend.name())
            + (backend.available() ? " (available)" : " (UNAVAILABLE)"));
    line(out, "", backend.reason());
    line(out, "enforced", pairs(backend.enforced()));
    line(out, "active sessions", String.valueOf(status.activeSessions()));
    line(
        out,
        "session ttl",
        status.sessionTtlSec() == 0 ? "none (sessions live until deleted)" : ttl(status));
    line(out, "limits", pairs(status.limits()));
    out.flush();
    return 0;
  }

  private static String ttl(BoxRuntimeStatus status) {
    return status.sessionTtlSec() + " s idle";
  }

  private static String pairs(Map<String, ?> values) {
    if (values.isEmpty()) {
      return "none";
    }
    return new TreeMap<>(values)
        .entrySet().stream()
            .map(e -> e.getKey() + "=" + e.getValue())
            .collect(Collectors.joining(" "));
  }

  private static void line(PrintWriter out, String label, String value) {
    String prefix = label.isEmpty() ? "" : label + ":";
    out.println(String.format("%-17s%s", prefix, value));
  }
}
