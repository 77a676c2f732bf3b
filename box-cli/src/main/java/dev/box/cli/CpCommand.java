package dev.box.cli;

import dev.box.client.BoxClient;
import dev.box.client.BoxFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;

/** {@code box cp}: copies a file (or, with {@code --tar}, a directory) into or out of a session. */
@Command(
    name = "cp",
    description = {
      "Copies a file between this machine and a session: box cp LOCAL SESSION:PATH uploads,"
          + " box cp SESSION:PATH LOCAL downloads. The session must exist.",
      "PATH is as the sandbox sees it: absolute, or relative to /workspace. A LOCAL path with a"
          + " ':' must start with '/' or './'.",
      "With --tar, a download saves a tar of the directory PATH, and an upload extracts the"
          + " local tar into the directory PATH."
    })
final class CpCommand extends ClientCommand {

  @Option(
      names = "--tar",
      description = "Copy a directory as a tar: save a tar of it, or extract a local tar into it.")
  private boolean tar;

  @Parameters(index = "0", paramLabel = "SOURCE", description = "LOCAL or SESSION:PATH.")
  private String source = "";

  @Parameters(index = "1", paramLabel = "TARGET", description = "SESSION:PATH or LOCAL.")
  private String target = "";

  /** A side of the copy in a session. */
  private record Remote(String session, String path) {}

  @Override
  int run(BoxClient client) {
    Remote from = remote(source);
    Remote to = remote(target);
    if ((from == null) == (to == null)) {
      throw new ParameterException(
          commandLine(), "exactly one of SOURCE and TARGET must be SESSION:PATH");
    }
    BoxFiles files = client.files();
    if (to != null) {
      Path local = Path.of(source);
      if (!Files.isRegularFile(local)) {
        throw new ParameterException(commandLine(), "no such local file: " + source);
      }
      if (tar) {
        files.uploadArchive(to.session(), local, to.path());
      } else {
        files.upload(to.session(), local, to.path());
      }
      return 0;
    }
    Remote remote = Objects.requireNonNull(from);
    Path local = Path.of(target);
    if (Files.isDirectory(local)) {
      String name = remote.path().substring(remote.path().lastIndexOf('/') + 1);
      local = local.resolve(tar ? name + ".tar" : name);
    }
    if (tar) {
      files.downloadArchive(remote.session(), remote.path(), local);
    } else {
      files.download(remote.session(), remote.path(), local);
    }
    return 0;
  }

  /** {@code SESSION:PATH} read as such; a local path (no ':' or starting with / or ./) is null. */
  private @Nullable Remote remote(String argument) {
    int colon = argument.indexOf(':');
    if (colon < 0 || argument.startsWith("/") || argument.startsWith("./")) {
      return null;
    }
    String session = argument.substring(0, colon);
    String path = argument.substring(colon + 1);
    if (session.isEmpty() || path.isEmpty()) {
      throw new ParameterException(
          commandLine(), "'" + argument + "' must be SESSION:PATH with neither part empty");
    }
    return new Remote(session, path);
  }
}
