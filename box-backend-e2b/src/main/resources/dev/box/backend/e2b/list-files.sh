# shellcheck shell=sh
# Lists the regular files under $__BOX_DIR, one record each: size, a space, the path relative to
# $__BOX_DIR, a NUL.
cd -- "$__BOX_DIR" && find . -xdev -type f -printf '%s %P\0'
