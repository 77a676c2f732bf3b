# shellcheck shell=sh
# MakeDir: creates the directory $BOX_PATH and its parents.
[ -d "$BOX_PATH" ] && { echo "$BOX_PATH: directory already exists" >&2; exit 4; }
missing "$BOX_PATH" || { echo "$BOX_PATH: exists and is not a directory" >&2; exit 5; }
mkdir -p -- "$BOX_PATH" || exit 1
entries "$BOX_PATH" -maxdepth 0
