package dev.box.core.backend;

import java.util.Set;

/**
 * The copies a backend keeps of its sandboxes' writable roots (what a sandbox wrote outside its
 * workspace and mounts, as a container's layer), so that a fork or a snapshot of a session carries
 * them: a fork's sandbox starts from a copy of its source's root, and a snapshot keeps one for the
 * sessions created from it ({@link SandboxSpec#root}). A copy costs what the sandbox changed, not
 * the size of its root.
 *
 * <p>A copy is named by the reference {@link #keep} returns, which the runtime records with a
 * snapshot. A sandbox started from a copy holds what it uses: dropping the copy never takes it from
 * a running sandbox, and what the sandbox held goes with it. Thread-safe.
 */
public interface RootCopies {

  /**
   * Keeps a copy of the writable root of {@code sandbox}, one of this backend's, as it is at this
   * instant: its processes are frozen while it is copied (and stay frozen when they were).
   *
   * @return the copy's reference, for {@link SandboxSpec#root} and {@link #drop}
   * @throws dev.box.api.BoxException when the root cannot be copied
   */
  String keep(Sandbox sandbox);

  /**
   * Removes the copy {@code root}; sandboxes started from it keep what they use. Idempotent; a
   * failure is logged, never thrown.
   */
  void drop(String root);

  /**
   * Removes the copies this backend kept for the data directory that {@code kept} does not name: a
   * crash came between a copy and its record, or between a record's removal and the copy's. Called
   * once at startup, before anything is served.
   */
  void removeOthers(Set<String> kept);

  /** What a fork or a snapshot copies of a sandbox beyond its workspace, for the health report. */
  String describe();
}
