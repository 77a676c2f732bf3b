package dev.box.cli;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The terminal {@code box} runs in, driven by {@code stty} on {@code /dev/tty} (Java has no
 * terminal API): raw mode without echo while a remote terminal has the keyboard, its size, and its
 * settings restored on {@link #close}.
 */
final class LocalTerminal implements AutoCloseable {
  private static final File TTY = new File("/dev/tty");

  /** A terminal's size in characters. */
  record Size(int cols, int rows) {}

  private final String saved;

  private LocalTerminal(String saved) {
    this.saved = saved;
  }

  /**
   * Saves the terminal's settings and puts it in raw mode without echo.
   *
   * @throws IOException when there is no terminal ({@code stty} fails)
   */
  static LocalTerminal enterRaw() throws IOException {
    LocalTerminal terminal = new LocalTerminal(stty("-g").strip());
    stty("raw", "-echo");
    return terminal;
  }

  /** The terminal's size now. */
  Size size() throws IOException {
    String[] rowsCols = stty("size").strip().split("\\s+");
    try {
      return new Size(Integer.parseInt(rowsCols[1]), Integer.parseInt(rowsCols[0]));
    } catch (NumberFormatException | ArrayIndexOutOfBoundsException e) {
      throw new IOException("stty size printed no size", e);
    }
  }

  /** Restores the settings the terminal had before {@link #enterRaw}. */
  @Override
  public void close() throws IOException {
    stty(saved);
  }

  /** Runs {@code stty} on the terminal: what it prints. */
  private static String stty(String... args) throws IOException {
    List<String> command = new ArrayList<>(List.of("stty"));
    command.addAll(List.of(args));
    Process stty =
        new ProcessBuilder(command)
            .redirectInput(TTY)
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .start();
    String printed = new String(stty.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    try {
      if (stty.waitFor() != 0) {
        throw new IOException("stty " + String.join(" ", args) + " failed: is this a terminal?");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while running stty", e);
    }
    return printed;
  }
}
