# shellcheck shell=sh
# Removes $BOX_PATH, a directory with everything in it.
[ -e "$BOX_PATH" ] || [ -L "$BOX_PATH" ] || { echo "box: $BOX_PATH: No such file or directory" >&2; exit 1; }
exec rm -rf -- "$BOX_PATH"
