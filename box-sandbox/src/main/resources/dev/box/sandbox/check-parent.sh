# shellcheck shell=sh
# Run as `sh -c SCRIPT box-jail SERVER_PID COMMAND [ARG ...]`: exits 125 unless its parent is the
# server SERVER_PID; else execs the command.
[ "$PPID" = "$1" ] || exit 125; shift; exec "$@"
