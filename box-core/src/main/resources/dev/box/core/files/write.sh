# shellcheck shell=sh
# Writes stdin to $BOX_PATH, creating its parent directories: into the file $BOX_TMP_NAME beside it
# first, renamed over it once stdin ended.
d=$(dirname -- "$BOX_PATH") || exit 1
t="$d/$BOX_TMP_NAME"
[ -d "$BOX_PATH" ] && { echo "box: $BOX_PATH: Is a directory" >&2; exit 1; }
mkdir -p -- "$d" || exit 1
cat > "$t" || { rm -f -- "$t"; exit 1; }
mv -f -- "$t" "$BOX_PATH" || { rm -f -- "$t"; exit 1; }
