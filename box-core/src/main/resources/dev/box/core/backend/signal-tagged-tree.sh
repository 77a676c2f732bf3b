# shellcheck shell=sh
# Signals every process whose environment holds __BOX_TREE=$__BOX_KILL, and every descendant of
# one, with $__BOX_SIG (TERM or KILL); with KILL it repeats until none is left. Descendants are
# found through the parent pid in /proc/PID/stat, so children that called setsid or were re-parented
# are signalled too.
tag="__BOX_TREE=$__BOX_KILL"; sig="$__BOX_SIG"; round=0
while [ "$round" -lt 50 ]; do
  round=$((round + 1)); set_=' '
  for d in /proc/[0-9]*; do
    p=${d#/proc/}; [ "$p" = "$$" ] && continue
    if tr '\0' '\n' 2>/dev/null < "$d/environ" | grep -qxF -- "$tag"; then set_="$set_$p "; fi
  done
  grew=1
  while [ -n "$grew" ]; do
    grew=
    for d in /proc/[0-9]*; do
      p=${d#/proc/}
      case "$set_" in *" $p "*) continue ;; esac
      read -r stat 2>/dev/null < "$d/stat" || continue
      rest=${stat##*) }
      # The fields after the command name, split on purpose: a state letter and numbers, $2 the
      # parent pid.
      # shellcheck disable=SC2086
      set -- $rest
      case "$set_" in *" $2 "*) set_="$set_$p "; grew=1 ;; esac
    done
  done
  [ "$set_" = ' ' ] && exit 0
  # $set_ is a list of pids, split on purpose into one argument each.
  # shellcheck disable=SC2086
  kill -s "$sig" $set_ 2>/dev/null
  [ "$sig" = KILL ] || exit 0
  sleep 0.02
done
echo "box: processes still alive after 50 rounds:$set_" >&2; exit 1
