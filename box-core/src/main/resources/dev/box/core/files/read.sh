# shellcheck shell=sh
# Prints the size of the regular file $BOX_PATH on a line, then its bytes.
[ -e "$BOX_PATH" ] || { echo "box: $BOX_PATH: No such file or directory" >&2; exit 1; }
[ -d "$BOX_PATH" ] && { echo "box: $BOX_PATH: Is a directory" >&2; exit 1; }
[ -f "$BOX_PATH" ] || { echo "box: $BOX_PATH: Not a regular file" >&2; exit 1; }
[ -r "$BOX_PATH" ] || { echo "box: $BOX_PATH: Permission denied" >&2; exit 1; }
s=$(stat -L -c %s -- "$BOX_PATH") || exit 1
printf '%s\n' "$s"
exec cat -- "$BOX_PATH"
