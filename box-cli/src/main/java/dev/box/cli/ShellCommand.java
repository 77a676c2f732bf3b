package dev.box.cli;

import dev.box.api.BoxException;
import dev.box.api.BoxSpec;
import dev.box.client.BoxClient;
import dev.box.client.Terminal;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletionException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code box shell}: a terminal in a session's sandbox on the local terminal, in raw mode until the
 * remote shell exits, then exits as it did.
 *
 * <p>The local size is sent at the start and whenever it changes. Java has no handler for SIGWINCH
 * short of unsupported APIs, so the size is polled every {@link #SIZE_POLL} instead.
 */
@Command(
    name = "shell",
    description = {
      "Opens a shell on a terminal in a session's sandbox (the session is created on first use)"
          + " and exits with the shell's exit code."
    })
final class ShellCommand extends ClientCommand {
  private static final Duration SIZE_POLL = Duration.ofMillis(250);

  @Option(
      names = "--session",
      paramLabel = "ID",
      defaultValue = "default",
      description = "The session to open the shell in (default: ${DEFAULT-VALUE}).")
  private String session = "default";

  @Override
  int run(BoxClient client) {
    client.createSession(BoxSpec.builder(session).build());
    LocalTerminal local;
    try {
      local = LocalTerminal.enterRaw();
    } catch (IOException e) {
      err().println("box: box shell needs a terminal: " + e.getMessage());
      return BoxCli.EXIT_USAGE;
    }
    try (local) {
      return relay(client, local);
    } catch (IOException e) {
      err().println("box: cannot restore the terminal: " + e.getMessage());
      return BoxCli.EXIT_BOX_ERROR;
    }
  }

  /** Relays keys, output and size changes until the remote shell exits; its exit code. */
  private int relay(BoxClient client, LocalTerminal local) throws IOException {
    OutputStream screen = new FileOutputStream(FileDescriptor.out);
    LocalTerminal.Size size = local.size();
    try (Terminal remote =
        client.terminal(session, size.cols(), size.rows(), bytes -> show(screen, bytes))) {
      Thread.ofVirtual().name("box-shell-keys").start(() -> keys(System.in, remote));
      Thread.ofVirtual().name("box-shell-size").start(() -> followSize(local, size, remote));
      try {
        return remote.exitCode().join();
      } catch (CompletionException e) {
        throw e.getCause() instanceof BoxException box ? box : e;
      }
    }
  }

  private static void show(OutputStream screen, byte[] bytes) {
    try {
      screen.write(bytes);
      screen.flush();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Sends what is typed until the input or the connection ends. */
  private static void keys(InputStream typed, Terminal remote) {
    byte[] buffer = new byte[4096];
    try {
      int n;
      while ((n = typed.read(buffer)) >= 0) {
        if (n > 0) {
          remote.write(Arrays.copyOf(buffer, n));
        }
      }
    } catch (IOException | BoxException e) {
      // The shell has exited, or the input is gone: the exit code says the rest.
    }
  }

  /** Sends the local size whenever it is not the last one sent, until the connection ends. */
  private static void followSize(LocalTerminal local, LocalTerminal.Size sent, Terminal remote) {
    LocalTerminal.Size last = sent;
    try {
      while (!remote.exitCode().isDone()) {
        Thread.sleep(SIZE_POLL);
        LocalTerminal.Size now = local.size();
        if (!now.equals(last)) {
          remote.resize(now.cols(), now.rows());
          last = now;
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (IOException | BoxException e) {
      // The terminal or the connection is gone: nothing left to size.
    }
  }
}
