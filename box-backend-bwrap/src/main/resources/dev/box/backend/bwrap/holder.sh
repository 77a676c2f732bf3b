# shellcheck shell=sh
# What a sandbox runs until it is destroyed, as `sh -c SCRIPT box-holder COMMAND [ARG ...]`: makes
# the sandbox user's home, says "ready" (setup is complete), then execs the command, `sleep
# infinity`. A sandbox with the exec agent runs the agent instead, which does the same itself
# (`box-agent --home`).
# /home is there already (a tmpfs): -p only keeps a /home/box that exists from being an error.
# shellcheck disable=SC2174
mkdir -p -m 0700 /home/box 2>/dev/null; echo ready && exec "$@"
