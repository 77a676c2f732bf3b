# shellcheck shell=sh
# The holder of a jail whose processes start through the exec agent, as `sh -c SCRIPT NAME AGENT
# [ARG ...]`: makes the sandbox user's home, says "ready" (setup is complete), then execs the
# agent, which becomes pid 1 of the jail.
# /home is there already (a tmpfs): -p only keeps a /home/box that exists from being an error.
# shellcheck disable=SC2174
mkdir -p -m 0700 /home/box 2>/dev/null; echo ready && exec "$@"
