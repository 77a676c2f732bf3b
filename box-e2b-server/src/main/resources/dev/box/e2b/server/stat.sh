# shellcheck shell=sh
# Stat: the entry of $BOX_PATH itself.
missing "$BOX_PATH" && { echo "$BOX_PATH: no such file or directory" >&2; exit 3; }
entries "$BOX_PATH" -maxdepth 0
