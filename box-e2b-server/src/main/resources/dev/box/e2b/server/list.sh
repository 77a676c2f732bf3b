# shellcheck shell=sh
# ListDir: the entries under the directory $BOX_PATH, $BOX_DEPTH levels down.
missing "$BOX_PATH" && { echo "$BOX_PATH: no such file or directory" >&2; exit 3; }
[ -d "$BOX_PATH" ] || { echo "$BOX_PATH: not a directory" >&2; exit 5; }
entries -H "$BOX_PATH" -mindepth 1 -maxdepth "$BOX_DEPTH"
