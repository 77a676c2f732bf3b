# shellcheck shell=sh
# Starts a process in a sandbox, as `sh -c SCRIPT box-launch [--at-once] PROCS_FILE ... -- COMMAND
# [ARG ...]`: waits for a go line on stdin (the backend takes over the output pipes first; not with
# --at-once, whose stdin is the command's), writes its own pid into every cgroup.procs file
# PROCS_FILE, then execs the command, so the process and all it forks are limited and killable from
# its first instruction. Exits 125 when stdin ends first or a write fails.
if [ "${1-}" = --at-once ]; then
  shift
else
  read -r _ || exit 125
fi
for f do
  if [ "$f" = -- ]; then shift; break; fi
  echo $$ > "$f" || exit 125
  shift
done
exec "$@"
