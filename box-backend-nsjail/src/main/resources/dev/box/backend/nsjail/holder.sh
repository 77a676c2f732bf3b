# shellcheck shell=sh
# What a jail runs until it is destroyed, as pid 1 of the jail, named by its $0: makes the sandbox
# user's home, says "ready" (setup is complete), then waits for ever, reaping orphans.
# /home is there already (a tmpfs): -p only keeps a /home/box that exists from being an error.
# shellcheck disable=SC2174
mkdir -p -m 0700 /home/box 2>/dev/null; echo ready; while :; do sleep 86400 & wait; done
