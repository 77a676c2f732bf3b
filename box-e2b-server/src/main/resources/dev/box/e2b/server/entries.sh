# shellcheck shell=sh
# Defines entries: find's output for E2B's EntryInfo, eight NUL-terminated fields per entry (type,
# size, octal mode, owner, group, mtime in seconds, symbolic link target, path). The operation's
# script follows. Exit codes: 3 no such file, 4 exists, 5 wrong type of file.
entries() { find "$@" -printf '%y\0%s\0%m\0%u\0%g\0%T@\0%l\0%p\0'; }
missing() { [ ! -e "$1" ] && [ ! -L "$1" ]; }
