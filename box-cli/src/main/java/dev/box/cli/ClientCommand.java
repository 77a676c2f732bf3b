package dev.box.cli;

import dev.box.api.BoxDataDir;
import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.BoxRuntimeUnavailableException;
import dev.box.client.BoxClient;
import java.io.PrintWriter;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * A command that talks to a running server: the {@code --url}, {@code --token} and {@code
 * --data-dir} options, the client's lifetime, and the one place a {@link BoxException} becomes a
 * message and an exit code.
 *
 * <p>The token is found as {@link BoxClient.Builder#discoverControlToken(Map)} finds it: {@code
 * --token} (or {@code BOX_CONTROL_TOKEN}); else the control-token file of {@code --data-dir} (or
 * {@code BOX_DATA_DIR}); else, for a server on loopback, that of the default data dir, which is
 * where {@code box serve} started in the same directory keeps it.
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

  @Option(
      names = "--data-dir",
      paramLabel = "DIR",
      defaultValue = "${env:BOX_DATA_DIR}",
      description =
          "The server's data dir, whose control-token file holds the token when --token is not"
              + " given (default: $BOX_DATA_DIR, else "
              + BoxDataDir.DEFAULT
              + " for a server on loopback).")
  private @Nullable String dataDir;

  /** Does the command's work; a {@link BoxException} it throws is reported by {@link #call}. */
  abstract int run(BoxClient client);

  @Override
  public final Integer call() {
    BoxClient client;
    try {
      client = connect();
    } catch (IllegalArgumentException e) {
      // The token was given or found but cannot be used (an unreadable file, a control character).
      err().println("box: " + e.getMessage());
      return BoxCli.EXIT_USAGE;
    }
    try (client) {
      return run(client);
    } catch (BoxException e) {
      return report(e, client.baseUri());
    }
  }

  /**
   * The client of {@code --url} with the token found as {@link
   * BoxClient.Builder#discoverControlToken(Map)} finds it; a URL it refuses is a usage error.
   *
   * @throws IllegalArgumentException when the token cannot be used, with a message naming why
   */
  private BoxClient connect() {
    URI uri;
    try {
      uri = new URI(url.isBlank() ? DEFAULT_URL : url.strip());
    } catch (URISyntaxException e) {
      throw new ParameterException(
          commandLine(), "Invalid value for option '--url': " + e.getMessage());
    }
    Map<String, String> given = new HashMap<>();
    if (token != null) {
      given.put("BOX_CONTROL_TOKEN", token);
    }
    if (dataDir != null) {
      given.put("BOX_DATA_DIR", dataDir);
    }
    BoxClient.Builder builder;
    try {
      builder = BoxClient.builder(uri);
    } catch (IllegalArgumentException e) {
      throw new ParameterException(commandLine(), String.valueOf(e.getMessage()));
    }
    return builder.discoverControlToken(given).build();
  }

  private int report(BoxException e, URI server) {
    err().println("box: " + e.code().wireName() + ": " + e.getMessage());
    if (e.code() == BoxErrorCode.UNAUTHORIZED) {
      err().println("box: " + tokenHint());
      return BoxCli.EXIT_BOX_ERROR;
    }
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

  /** Where the token is looked for, in order, naming the file; never the token. */
  private String tokenHint() {
    if (token != null && !token.isBlank()) {
      return "the token of --token or BOX_CONTROL_TOKEN was refused.";
    }
    String named = dataDir == null || dataDir.isBlank() ? null : dataDir.strip();
    Path file = BoxDataDir.tokenFile(named != null ? Path.of(named) : BoxDataDir.defaultPath());
    return "box sends the token of --token or BOX_CONTROL_TOKEN; else the one in "
        + file
        + (Files.exists(file) ? "" : " (which does not exist)")
        + ", the "
        + BoxDataDir.TOKEN_FILE
        + " file of "
        + (named != null
            ? "--data-dir or BOX_DATA_DIR"
            : "the default data dir, sent to a server on loopback only; --data-dir or BOX_DATA_DIR"
                + " names another")
        + ". A server started without --control-token writes its token there, readable by its"
        + " user only.";
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
