# shellcheck shell=sh
# Extracts the tar on stdin into the directory $BOX_PATH, created when missing.
mkdir -p -- "$BOX_PATH" || exit 1
[ -d "$BOX_PATH" ] || { echo "box: $BOX_PATH: Not a directory" >&2; exit 1; }
exec tar -x -f - --no-same-owner --no-same-permissions -C "$BOX_PATH"
