# shellcheck shell=sh
# Move: renames $BOX_SOURCE to $BOX_DESTINATION (replacing it), creating its parent directories.
missing "$BOX_SOURCE" && { echo "$BOX_SOURCE: no such file or directory" >&2; exit 3; }
mkdir -p -- "$(dirname -- "$BOX_DESTINATION")" || exit 1
mv -f -T -- "$BOX_SOURCE" "$BOX_DESTINATION" || exit 1
entries "$BOX_DESTINATION" -maxdepth 0
