package dev.box.cli;

import dev.box.server.BoxServer;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The {@code box} command and its exit codes.
 *
 * <p>Exit codes: 0 success (or, for {@code exec}, the command's own exit code), 1 an error the
 * server reported (a missing or wrong control token among them), 2 a usage error, a configuration
 * {@code serve} refused or a control token that cannot be used, 3 the server cannot be reached, 124
 * an {@code exec} that hit its timeout.
 */
@Command(
    name = "box",
    mixinStandardHelpOptions = true,
    version = "box " + BoxServer.VERSION,
    description = "Box: a sandbox runtime for AI agents.",
    subcommands = {
      ServeCommand.class,
      ExecCommand.class,
      ShellCommand.class,
      CpCommand.class,
      SessionsCommand.class,
      SessionCommand.class,
      PauseCommand.Pause.class,
      PauseCommand.Resume.class,
      ForkCommand.class,
      SnapshotCommand.class,
      StatusCommand.class,
      McpCommand.class,
      CommandLine.HelpCommand.class
    })
public final class BoxCli implements Runnable {
  /** The server reported an error. */
  static final int EXIT_BOX_ERROR = 1;

  /** The command line or the server configuration is wrong. */
  static final int EXIT_USAGE = 2;

  /** The server cannot be reached. */
  static final int EXIT_UNAVAILABLE = 3;

  /** The command of {@code box exec} hit its timeout, as coreutils {@code timeout} reports it. */
  static final int EXIT_TIMED_OUT = 124;

  @Spec private @Nullable CommandSpec spec;

  /**
   * Runs {@code box} with {@code args} through picocli and exits the JVM with its exit code; {@link
   * Main} starts a server with plain arguments without it.
   */
  public static void main(String[] args) {
    boolean serve = args.length > 0 && args[0].equals("serve");
    // Command output is passed through as the server returned it: always UTF-8.
    PrintWriter out =
        new PrintWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), true);
    PrintWriter err =
        new PrintWriter(new OutputStreamWriter(System.err, StandardCharsets.UTF_8), true);
    CommandLine cli = serve ? serveCommandLine() : newCommandLine();
    cli.setOut(out);
    cli.setErr(err);
    System.exit(cli.execute(serve ? Arrays.copyOfRange(args, 1, args.length) : args));
  }

  /**
   * {@code box serve} alone, for the arguments after {@code serve}: the server's start builds no
   * model of the other commands, whose annotations picocli would read by reflection first (a tenth
   * of a second and more of the start). Its messages and usage name it {@code box serve}, as under
   * {@link #newCommandLine}.
   */
  static CommandLine serveCommandLine() {
    CommandLine serve = new CommandLine(new ServeCommand());
    serve.setCommandName("box serve");
    return serve;
  }

  /**
   * The configured command line; {@link CommandLine#execute} runs it and returns the exit code.
   * Unlike {@code new CommandLine(new BoxCli())}, it lets {@code box exec ls -la} go without {@code
   * --}: the first word of the command ends the options of {@code exec}.
   */
  public static CommandLine newCommandLine() {
    CommandLine cli = new CommandLine(new BoxCli());
    Objects.requireNonNull(cli.getSubcommands().get("exec")).setStopAtPositional(true);
    return cli;
  }

  /** {@code box} alone is a usage error: it names no command. */
  @Override
  public void run() {
    CommandSpec self = Objects.requireNonNull(spec, "picocli injects the spec");
    throw new ParameterException(self.commandLine(), "Missing required subcommand");
  }
}
