package dev.box.testkit;

import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * The host processes the namespace backends (bubblewrap, nsjail) run for a sandbox, for their
 * leftovers and for killing a sandbox from outside.
 */
final class SandboxProcesses {
  private SandboxProcesses() {}

  /**
   * Hands {@code visitor} each slirp4netns process on the host with the pid whose network namespace
   * it serves (the second last argument of its command line); one that names none is skipped.
   */
  static void forEachSlirp(SlirpVisitor visitor) {
    ProcessHandle.allProcesses()
        .filter(h -> h.info().command().map(c -> c.endsWith("/slirp4netns")).orElse(false))
        .forEach(h -> target(h).ifPresent(target -> visitor.visit(h, target)));
  }

  /** Sees one slirp4netns process and the pid it serves. */
  @FunctionalInterface
  interface SlirpVisitor {
    void visit(ProcessHandle slirp, long target);
  }

  private static OptionalLong target(ProcessHandle slirp) {
    List<String> args = slirp.info().arguments().map(List::of).orElse(List.of());
    if (args.size() < 2) {
      return OptionalLong.empty();
    }
    try {
      return OptionalLong.of(Long.parseLong(args.get(args.size() - 2)));
    } catch (NumberFormatException e) {
      return OptionalLong.empty(); // Not one of ours.
    }
  }

  /**
   * Kills every host process {@code which} accepts, as an operator or the OOM killer might, and
   * waits up to 10 s for each to die.
   *
   * @param what the kind of process, for the failure message
   */
  static void killFromOutside(Predicate<ProcessHandle> which, String what) {
    ProcessHandle.allProcesses()
        .filter(which)
        .forEach(
            h -> {
              h.destroyForcibly();
              try {
                h.onExit().get(10, TimeUnit.SECONDS);
              } catch (Exception e) {
                throw new AssertionError(what + " pid " + h.pid() + " did not die", e);
              }
            });
  }
}
