package dev.box.core.backend;

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
   * KILL}); with KILL it repeats until none is left. Fixed text: the tag and signal travel in the
   * environment.
   */
  public static final String SIGNAL_SCRIPT =
      String.join(
          "\n",
          "tag=\"__BOX_TREE=$__BOX_KILL\"; sig=\"$__BOX_SIG\"; round=0",
          "while [ \"$round\" -lt 50 ]; do",
          "  round=$((round + 1)); set_=' '",
          "  for d in /proc/[0-9]*; do",
          "    p=${d#/proc/}; [ \"$p\" = \"$$\" ] && continue",
          "    if tr '\\0' '\\n' 2>/dev/null < \"$d/environ\" | grep -qxF -- \"$tag\"; then"
              + " set_=\"$set_$p \"; fi",
          "  done",
          "  grew=1",
          "  while [ -n \"$grew\" ]; do",
          "    grew=",
          "    for d in /proc/[0-9]*; do",
          "      p=${d#/proc/}",
          "      case \"$set_\" in *\" $p \"*) continue ;; esac",
          "      read -r stat 2>/dev/null < \"$d/stat\" || continue",
          "      rest=${stat##*) }; set -- $rest",
          "      case \"$set_\" in *\" $2 \"*) set_=\"$set_$p \"; grew=1 ;; esac",
          "    done",
          "  done",
          "  [ \"$set_\" = ' ' ] && exit 0",
          "  kill -s \"$sig\" $set_ 2>/dev/null",
          "  [ \"$sig\" = KILL ] || exit 0",
          "  sleep 0.02",
          "done",
          "echo \"box: processes still alive after 50 rounds:$set_\" >&2; exit 1");

  private TaggedTree() {}
}
