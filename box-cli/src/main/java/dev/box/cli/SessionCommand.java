package dev.box.cli;

import dev.box.client.BoxClient;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code box session}: the commands on one session. */
@Command(
    name = "session",
    description = "Acts on one session.",
    subcommands = SessionCommand.Remove.class)
final class SessionCommand implements Runnable {
  @Spec private @Nullable CommandSpec spec;

  /** {@code box session} alone is a usage error: it names no action. */
  @Override
  public void run() {
    CommandSpec self = Objects.requireNonNull(spec, "picocli injects the spec");
    throw new ParameterException(self.commandLine(), "Missing required subcommand");
  }

  /** {@code box session rm ID}: stops a session and deletes its workspace. */
  @Command(name = "rm", description = "Stops a session and deletes its private workspace.")
  static final class Remove extends ClientCommand {
    @Parameters(paramLabel = "ID", description = "The session to delete.")
    private String sessionId = "";

    @Override
    int run(BoxClient client) {
      client.deleteSession(sessionId);
      out().println("deleted " + sessionId);
      out().flush();
      return 0;
    }
  }
}
