package dev.box.core.backend;

import dev.box.api.internal.ShellScript;

/**
 * Finding and signalling a process tree inside a sandbox the backend cannot see into from the host
 * (a container, a remote VM): every process an exec starts inherits a tag ({@code __BOX_TREE}) in
 * its environment, and a fixed script run in the same sandbox signals every tagged process and
 * every descendant of one, so that children which called {@code setsid} or were re-parented are
 * found too.
 */
public final class TaggedTree {
  /** The environment variable that carries a tree's tag. */
  public static final String TAG_VARIABLE = "__BOX_TREE";

  /**
   * Signals the tree tagged {@code $__BOX_KILL} with {@code $__BOX_SIG} ({@code TERM} or {@code
   * KILL}); with KILL it repeats until none is left. Fixed text, signal-tagged-tree.sh beside this
   * class: the tag and signal travel in the environment.
   */
  public static final String SIGNAL_SCRIPT =
      ShellScript.load(TaggedTree.class, "signal-tagged-tree.sh");

  private TaggedTree() {}
}
