package dev.box.cli;

import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The jar's entry point. {@code box serve} with plain arguments starts the server through {@link
 * Serve} and never touches picocli, whose classes (Java 5 bytecode) the AOT cache cannot hold and
 * every start would load and verify from the jar; everything else is {@link BoxCli}'s.
 */
public final class Main {
  private Main() {}

  /** Runs {@code box} with {@code args} and exits the JVM with its exit code. */
  public static void main(String[] args) {
    Serve.Direct direct =
        args.length > 0 && args[0].equals("serve")
            ? Serve.direct(Arrays.asList(args).subList(1, args.length))
            : null;
    if (direct == null) {
      BoxCli.main(args);
      return;
    }
    PrintWriter err =
        new PrintWriter(new OutputStreamWriter(System.err, StandardCharsets.UTF_8), true);
    int code;
    try {
      code = Serve.serve(direct.flags(), direct.stdioControl(), err);
    } catch (Exception e) {
      // As picocli reports what a command throws: its trace, and exit code 1.
      e.printStackTrace(err);
      code = 1;
    }
    System.exit(code);
  }
}
