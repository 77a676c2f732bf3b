package dev.box.cli;

import dev.box.server.BoxServer;
import dev.box.server.ServerConfig;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.IModelTransformer;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code box serve} for picocli: its help, and the arguments {@link Serve#direct} leaves to picocli
 * (an unknown or repeated option, an {@code @file}); it runs the server as {@link Serve#serve}
 * does. Only the flags given on the command line reach {@link ServerConfig#resolve}.
 */
@Command(
    name = "serve",
    mixinStandardHelpOptions = true,
    version = "box " + BoxServer.VERSION,
    modelTransformer = ServeCommand.Settings.class,
    description = {
      "Runs the Box server until Ctrl-C or SIGTERM. It also serves MCP (streamable HTTP) at /mcp,"
          + " behind the same control token.",
      "Each option can also come from BOX_<NAME> (for example BOX_DATA_DIR) or the config file;"
          + " options win over variables, variables over the file."
    })
final class ServeCommand implements Callable<Integer> {
  @Spec private @Nullable CommandSpec spec;

  @Option(
      names = {"-s", "--stdio-control"},
      description =
          "Run LangBot's control channel over stdin/stdout (as LangBot launches its runtime);"
              + " requires LANGBOT_BOX_TRUSTED_INSTANCE_UUID.")
  private boolean stdioControl;

  @Option(
      names = "--insecure",
      description =
          "DANGEROUS: with no token configured, require none instead of generating one; anything"
              + " that reaches the port can then run code as this user.")
  private boolean insecure;

  /**
   * Adds an option for each of {@link Serve#SETTINGS}; picocli runs it as it builds the command.
   */
  static final class Settings implements IModelTransformer {
    @Override
    public CommandSpec transform(CommandSpec command) {
      for (Serve.Setting setting : Serve.SETTINGS) {
        List<String> names = new ArrayList<>(List.of(setting.name()));
        names.addAll(List.of(setting.aliases()));
        command.addOption(
            OptionSpec.builder(names.toArray(String[]::new))
                .paramLabel(setting.label())
                .description(setting.description())
                .type(String.class)
                .build());
      }
      return command;
    }
  }

  @Override
  public Integer call() throws InterruptedException, IOException {
    return Serve.serve(
        flags(),
        stdioControl,
        Objects.requireNonNull(spec, "picocli injects the spec").commandLine().getErr());
  }

  /** The flags the user gave, by {@link ServerConfig#KEYS} name. */
  Map<String, String> flags() {
    CommandSpec command = Objects.requireNonNull(spec, "picocli injects the spec");
    Map<String, String> flags = new LinkedHashMap<>();
    for (Serve.Setting setting : Serve.SETTINGS) {
      String value = command.findOption(setting.name()).getValue();
      if (value != null) {
        flags.put(setting.key(), value);
      }
    }
    if (insecure) {
      flags.put("insecure", "true");
    }
    return flags;
  }
}
