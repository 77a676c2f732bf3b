# shellcheck shell=sh
# Remove: removes $BOX_PATH, a directory with everything in it.
missing "$BOX_PATH" && { echo "$BOX_PATH: no such file or directory" >&2; exit 3; }
rm -rf -- "$BOX_PATH"
