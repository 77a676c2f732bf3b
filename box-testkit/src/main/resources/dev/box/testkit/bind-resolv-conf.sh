# shellcheck shell=sh
# Run as `sh -c SCRIPT RESOLV_CONF PROGRAM [ARG ...]` in a mount namespace of its own: bind-mounts
# the file RESOLV_CONF ($0) over /etc/resolv.conf, as `ip netns exec` does, then execs the program.
mount --bind "$0" /etc/resolv.conf && exec "$@"
