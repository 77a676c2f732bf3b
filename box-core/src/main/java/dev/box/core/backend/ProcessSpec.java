package dev.box.core.backend;

import java.util.List;
import java.util.Map;

/**
 * A process to spawn in a sandbox.
 *
 * @param command what to run
 * @param workdir absolute directory inside the sandbox, created when missing
 * @param env environment variables on top of the sandbox's defaults ({@code PATH}, {@code HOME},
 *     ...)
 * @param stdin whether the caller writes to the process's stdin; when false it reads /dev/null
 * @param memoryMb a memory limit for this process tree in MiB, within the sandbox's; 0 for none
 */
public record ProcessSpec(
    Command command, String workdir, Map<String, String> env, boolean stdin, int memoryMb) {

  /** Copies {@code env}. */
  public ProcessSpec {
    env = Map.copyOf(env);
  }

  /** A spec with no limit of its own. */
  public ProcessSpec(Command command, String workdir, Map<String, String> env, boolean stdin) {
    this(command, workdir, env, stdin, 0);
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
