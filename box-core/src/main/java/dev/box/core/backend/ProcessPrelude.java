package dev.box.core.backend;

import dev.box.api.internal.ShellScript;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The fixed shell prelude that starts every process inside a sandbox, whatever the backend.
 *
 * <p>It runs as {@code /bin/sh -c SCRIPT sh} inside the sandbox. Nothing from the request is on any
 * command line: the command, the working directory and the limits travel in environment variables
 * ({@link #environment}), and the prelude removes its own variables before the command runs. It
 * closes stdin unless asked, applies an optional address-space limit, enters (creating when
 * missing) the working directory, then runs the script or execs the argument vector.
 */
public final class ProcessPrelude {
  /** The prelude script, process-prelude.sh beside this class. */
  public static final String SCRIPT = ShellScript.load(ProcessPrelude.class, "process-prelude.sh");

  private ProcessPrelude() {}

  /**
   * The variables the prelude reads, on top of the spec's own environment.
   *
   * @param spec the process to start
   * @param addressSpaceKib an address-space limit in KiB for the process tree, or 0 for none
   */
  public static Map<String, String> environment(ProcessSpec spec, long addressSpaceKib) {
    Map<String, String> env = new LinkedHashMap<>(spec.env());
    env.put("__BOX_WORKDIR", spec.workdir());
    env.put("__BOX_STDIN", spec.stdin() ? "1" : "");
    env.put("__BOX_ULIMIT_V", addressSpaceKib > 0 ? Long.toString(addressSpaceKib) : "");
    switch (spec.command()) {
      case ProcessSpec.Shell shell -> env.put("__BOX_SCRIPT", shell.script());
      case ProcessSpec.Argv argv -> {
        env.put("__BOX_ARGC", Integer.toString(argv.argv().size()));
        for (int i = 0; i < argv.argv().size(); i++) {
          env.put("__BOX_ARG_" + i, argv.argv().get(i));
        }
      }
    }
    return env;
  }
}
