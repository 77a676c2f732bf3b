package dev.box.core.backend;

import dev.box.api.BoxValidationException;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * A process to spawn in a sandbox.
 *
 * @param command what to run
 * @param workdir absolute directory inside the sandbox, created when missing
 * @param env environment variables on top of the sandbox's defaults ({@code PATH}, {@code HOME},
 *     ...)
 * @param stdin whether the caller writes to the process's stdin; when false it reads /dev/null
 * @param memoryMb a memory limit for this process tree in MiB, within the sandbox's; 0 for none
 * @param terminal the size of the terminal the process runs on, or null for none: then its stdin,
 *     stdout and stderr are the terminal, stdin must be asked for, and {@link
 *     SandboxProcess#stdout} carries what the terminal writes ({@link SandboxProcess#stderr}
 *     nothing)
 */
public record ProcessSpec(
    Command command,
    String workdir,
    Map<String, String> env,
    boolean stdin,
    int memoryMb,
    @Nullable Terminal terminal) {

  /** Copies {@code env} and checks that a terminal has stdin. */
  public ProcessSpec {
    env = Map.copyOf(env);
    if (terminal != null && !stdin) {
      throw new IllegalArgumentException("a process on a terminal has stdin");
    }
  }

  /** A spec without a terminal. */
  public ProcessSpec(
      Command command, String workdir, Map<String, String> env, boolean stdin, int memoryMb) {
    this(command, workdir, env, stdin, memoryMb, null);
  }

  /** A spec with no limit of its own and without a terminal. */
  public ProcessSpec(Command command, String workdir, Map<String, String> env, boolean stdin) {
    this(command, workdir, env, stdin, 0);
  }

  /**
   * Refuses a spec that asks for a terminal, for a sandbox whose processes cannot have one.
   *
   * @param why what the client reads: which backend, and why it has no terminals
   * @throws BoxValidationException when {@link #terminal} is set
   */
  public void refuseTerminal(String why) {
    if (terminal != null) {
      throw new BoxValidationException(why);
    }
  }

  /**
   * The size of a process's terminal, in characters.
   *
   * @param cols its width, 1 to {@value #MAX}
   * @param rows its height, 1 to {@value #MAX}
   */
  public record Terminal(int cols, int rows) {
    /** The largest width or height. */
    public static final int MAX = 1000;

    /** Checks the size. */
    public Terminal {
      if (cols < 1 || cols > MAX || rows < 1 || rows > MAX) {
        throw new BoxValidationException(
            "a terminal's cols and rows must be 1 to " + MAX + ", not " + cols + "x" + rows);
      }
    }
  }

  /** What a process runs: a shell script or an argument vector. */
  public sealed interface Command {}

  /**
   * A script run by {@code /bin/sh} inside the sandbox.
   *
   * @param script the script text
   */
  public record Shell(String script) implements Command {}

  /**
   * A program and its arguments, executed directly (looked up on {@code PATH}).
   *
   * @param argv the program followed by its arguments; not empty
   */
  public record Argv(List<String> argv) implements Command {

    /** Copies and checks {@code argv}. */
    public Argv {
      argv = List.copyOf(argv);
      if (argv.isEmpty()) {
        throw new IllegalArgumentException("argv must not be empty");
      }
    }
  }
}
