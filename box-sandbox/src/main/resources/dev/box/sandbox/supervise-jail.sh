# shellcheck shell=sh
# Run as `sh -c SCRIPT box-jail SERVER_PID COMMAND [ARG ...]`, the leader of a process group of its
# own: kills that whole group on TERM; exits 125 unless its parent is the server SERVER_PID; else
# runs the command, standard input included, and exits as it does.
trap 'kill -KILL 0' TERM
[ "$PPID" = "$1" ] || exit 125
shift
# A command started with & would read /dev/null: it gets this shell's stdin through fd 3.
exec 3<&0
"$@" <&3 3<&- &
exec 3<&-
wait $!
