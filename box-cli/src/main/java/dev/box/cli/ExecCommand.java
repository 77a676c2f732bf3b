package dev.box.cli;

import dev.box.api.BoxExecutionResult;
import dev.box.api.BoxExecutionStatus;
import dev.box.api.BoxNetworkMode;
import dev.box.api.BoxSpec;
import dev.box.api.BoxValidationException;
import dev.box.client.BoxClient;
import dev.box.client.ExecOutput;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.TypeConversionException;

/**
 * {@code box exec}: runs one command in a session, prints its output as it comes, and exits as the
 * command did.
 */
@Command(
    name = "exec",
    description = {
      "Runs a command in a session (created on first use) and exits with its exit code,"
          + " or 124 when it timed out.",
      "One CMD word is a shell command ('echo hi | wc -c'); several words are quoted"
          + " one by one, like arguments."
    })
final class ExecCommand extends ClientCommand {

  @Option(
      names = "--session",
      paramLabel = "ID",
      defaultValue = "default",
      description = "The session to run in (default: ${DEFAULT-VALUE}).")
  private String session = "default";

  @Option(
      names = "--timeout",
      paramLabel = "SEC",
      description = "Kill the command after this many seconds (server default: 30).")
  private @Nullable Integer timeoutSec;

  @Option(
      names = "--network",
      paramLabel = "on|off",
      converter = NetworkConverter.class,
      description = "Network access of a new session (default: off).")
  private @Nullable BoxNetworkMode network;

  @Option(
      names = "--workdir",
      paramLabel = "DIR",
      description = "Absolute directory in the sandbox to run in (default: /workspace).")
  private @Nullable String workdir;

  @Option(
      names = {"-e", "--env"},
      paramLabel = "K=V",
      description = "Set an environment variable of the command; repeatable.")
  private Map<String, String> env = new LinkedHashMap<>();

  @Parameters(arity = "1..*", paramLabel = "CMD", description = "The command to run.")
  private List<String> command = new ArrayList<>();

  /** Prints the command's output as it comes, and whether stderr's last line is unfinished. */
  private final class Printer implements ExecOutput {
    private boolean stderrLineOpen;

    @Override
    public void stdout(String text) {
      out().print(text);
      out().flush();
    }

    @Override
    public void stderr(String text) {
      err().print(text);
      err().flush();
      stderrLineOpen = !text.endsWith("\n");
    }
  }

  @Override
  int run(BoxClient client) {
    Printer printer = new Printer();
    BoxExecutionResult result = client.exec(spec(), printer);
    if (result.status() == BoxExecutionStatus.TIMED_OUT) {
      if (printer.stderrLineOpen) {
        err().println();
      }
      err().println("box: the command timed out after " + (result.durationMs() / 1000) + " s");
      return BoxCli.EXIT_TIMED_OUT;
    }
    Integer exitCode = result.exitCode();
    return exitCode == null ? BoxCli.EXIT_BOX_ERROR : exitCode;
  }

  /** The request; a value the model refuses is a usage error, not a server error. */
  private BoxSpec spec() {
    try {
      BoxSpec.Builder spec = BoxSpec.builder(session).cmd(ShellWords.join(command)).env(env);
      if (timeoutSec != null) {
        spec.timeoutSec(timeoutSec);
      }
      if (network != null) {
        spec.network(network);
      }
      if (workdir != null) {
        spec.workdir(workdir);
      }
      return spec.build();
    } catch (BoxValidationException e) {
      throw new ParameterException(commandLine(), String.valueOf(e.getMessage()));
    }
  }

  /** Parses {@code on} or {@code off} with the wire model's message for anything else. */
  static final class NetworkConverter implements ITypeConverter<BoxNetworkMode> {
    @Override
    public BoxNetworkMode convert(String value) {
      try {
        return BoxNetworkMode.fromWire(value);
      } catch (BoxValidationException e) {
        throw new TypeConversionException(String.valueOf(e.getMessage()));
      }
    }
  }
}
