# shellcheck shell=sh
# Prints the apparent size of $BOX_PATH on a line, then a tar of it: of the directory's contents
# for a directory, else of the one entry.
[ -e "$BOX_PATH" ] || { echo "box: $BOX_PATH: No such file or directory" >&2; exit 1; }
[ -r "$BOX_PATH" ] || { echo "box: $BOX_PATH: Permission denied" >&2; exit 1; }
s=$(du -s -b -D -- "$BOX_PATH" 2>/dev/null | cut -f1)
printf '%s\n' "${s:-0}"
if [ -d "$BOX_PATH" ]; then exec tar -c -f - -C "$BOX_PATH" .; fi
exec tar -c -f - -C "$(dirname -- "$BOX_PATH")" "./$(basename -- "$BOX_PATH")"
