package dev.box.cli;

import dev.box.api.BoxSnapshot;
import dev.box.client.BoxClient;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code box snapshot create|ls|rm}: immutable copies of a session's workspace, which a session
 * created with {@code from_snapshot} starts from.
 */
@Command(
    name = "snapshot",
    description = "Takes, lists and deletes snapshots of workspaces.",
    subcommands = {
      SnapshotCommand.Create.class,
      SnapshotCommand.Listing.class,
      SnapshotCommand.Remove.class
    })
final class SnapshotCommand implements Runnable {
  @Spec private @Nullable CommandSpec spec;

  /** {@code box snapshot} alone is a usage error: it names no action. */
  @Override
  public void run() {
    CommandSpec self = Objects.requireNonNull(spec, "picocli injects the spec");
    throw new ParameterException(self.commandLine(), "Missing required subcommand");
  }

  /** {@code box snapshot create --session S --name N}. */
  @Command(name = "create", description = "Keeps a copy of a session's workspace by name.")
  static final class Create extends ClientCommand {
    @Option(
        names = "--session",
        paramLabel = "ID",
        required = true,
        description = "The session whose workspace is copied.")
    private String session = "";

    @Option(
        names = "--name",
        paramLabel = "NAME",
        required = true,
        description = "The snapshot's name: letters, digits, '.', '-', '_' (at most 64).")
    private String name = "";

    @Override
    int run(BoxClient client) {
      BoxSnapshot snapshot = client.snapshot(session, name);
      out().println("snapshot " + snapshot.name() + " of " + snapshot.sessionId());
      out().flush();
      return 0;
    }
  }

  /** {@code box snapshot ls}. */
  @Command(name = "ls", description = "Lists the snapshots.")
  static final class Listing extends ClientCommand {
    @Option(names = "--json", description = "Print the server's JSON instead of a table.")
    private boolean json;

    @Override
    int run(BoxClient client) {
      List<BoxSnapshot> snapshots = client.snapshots();
      if (json) {
        Json.print(out(), snapshots);
        return 0;
      }
      TextTable table = new TextTable("SNAPSHOT", "SESSION", "CREATED", "BYTES");
      for (BoxSnapshot s : snapshots) {
        Long size = s.sizeBytes();
        table.row(
            s.name(),
            s.sessionId(),
            s.createdAt().truncatedTo(ChronoUnit.SECONDS).toString(),
            size == null ? "-" : size.toString());
      }
      table.print(out());
      return 0;
    }
  }

  /** {@code box snapshot rm NAME}. */
  @Command(name = "rm", description = "Deletes a snapshot.")
  static final class Remove extends ClientCommand {
    @Parameters(paramLabel = "NAME", description = "The snapshot to delete.")
    private String name = "";

    @Override
    int run(BoxClient client) {
      client.deleteSnapshot(name);
      out().println("deleted snapshot " + name);
      out().flush();
      return 0;
    }
  }
}
