# shellcheck shell=sh
# Lists the directory $BOX_PATH (or the one entry of anything else), one entry per NUL-terminated
# record: type, size, octal mode, mtime in seconds, depth (0 for $BOX_PATH itself), name.
[ -e "$BOX_PATH" ] || [ -L "$BOX_PATH" ] || { echo "box: $BOX_PATH: No such file or directory" >&2; exit 1; }
if [ -d "$BOX_PATH" ]; then depth=1; else depth=0; fi
exec find -H "$BOX_PATH" -mindepth "$depth" -maxdepth "$depth" -printf '%y %s %m %T@ %d %f\0'
