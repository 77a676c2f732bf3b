# shellcheck shell=sh
# WatchDir: a snapshot of the directory $BOX_PATH, $BOX_DEPTH levels down, every $BOX_INTERVAL
# seconds, for as long as it exists. Each entry is one NUL-terminated record "type/inode/size/
# mtime/mode/path" (the path relative to $BOX_PATH, last since it may hold slashes); an empty
# record ends each snapshot.
missing "$BOX_PATH" && { echo "$BOX_PATH: no such file or directory" >&2; exit 3; }
[ -d "$BOX_PATH" ] || { echo "$BOX_PATH: not a directory" >&2; exit 5; }
while [ -d "$BOX_PATH" ]; do
  find -H "$BOX_PATH" -mindepth 1 -maxdepth "$BOX_DEPTH" -printf '%y/%i/%s/%T@/%m/%P\0' 2>/dev/null
  printf '\0'
  sleep "$BOX_INTERVAL"
done
echo "$BOX_PATH: the watched directory was removed" >&2
exit 3
