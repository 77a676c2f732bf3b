package dev.box.cli;

import dev.box.api.BoxException;
import dev.box.api.BoxRuntimeUnavailableException;
import dev.box.client.BoxClient;
import java.io.PrintWriter;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Objects;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * A command that talks to a running server: the {@code --url} and {@code --token} options, the
 * client's lifetime, and the one place a {@link BoxException} becomes a message and an exit code.
 */
abstract class ClientCommand implements Callable<Integer> {
  static final String DEFAULT_URL = "http://127.0.0.1:5410";

  @Spec private @Nullable CommandSpec spec;

  @Option(
      names = "--url",
      paramLabel = "URL",
      defaultValue = "${env:BOX_URL:-" + DEFAULT_URL + "}",
      description = "The Box server (default: $BOX_URL, else " + DEFAULT_URL + ").")
  private String url = DEFAULT_URL;

  @Option(
      names = "--token",
      paramLabel = "TOKEN",
      defaultValue = "${env:BOX_CONTROL_TOKEN}",
      description = "The server's control token (default: $BOX_CONTROL_TOKEN).")
  private @Nullable String token;

  /** Does the command's work; a {@link BoxException} it throws is reported by {@link #call}. */
  abstract int run(BoxClient client);

  @Override
  public final Integer call() {
    BoxClient client = connect();
    try (client) {
      return run(client);
    } catch (BoxException e) {
      return report(e, client.baseUri());
    }
  }

  /** The client of {@code --url} with {@code --token}; a value it refuses is a usage error. */
  private BoxClient connect() {
    URI uri;
    try {
      uri = new URI(url.isBlank() ? DEFAULT_URL : url.strip());
    } catch (URISyntaxException e) {
      throw new ParameterException(
          commandLine(), "Invalid value for option '--url': " + e.getMessage());
    }
    try {
      return BoxClient.builder(uri).controlToken(token).build();
    } catch (IllegalArgumentException e) {
      throw new ParameterException(commandLine(), String.valueOf(e.getMessage()));
    }
  }

  private int report(BoxException e, URI server) {
    err().println("box: " + e.code().wireName() + ": " + e.getMessage());
    if (e instanceof BoxRuntimeUnavailableException) {
      err()
          .println(
              "box: is the server running at "
                  + server
                  + "? Start one with 'box serve', or point --url or BOX_URL at it.");
      return BoxCli.EXIT_UNAVAILABLE;
    }
    return BoxCli.EXIT_BOX_ERROR;
  }

  final CommandLine commandLine() {
    return Objects.requireNonNull(spec, "picocli injects the spec").commandLine();
  }

  final PrintWriter out() {
    return commandLine().getOut();
  }

  final PrintWriter err() {
    return commandLine().getErr();
  }
}
