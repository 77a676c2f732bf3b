# shellcheck shell=sh
# Starts every process inside a sandbox, whatever the backend, as `/bin/sh -c SCRIPT sh`. All it
# reads comes from the environment (ProcessPrelude.environment), and it unsets its own variables
# before the command runs: it closes stdin unless $__BOX_STDIN, applies the address-space limit
# $__BOX_ULIMIT_V (KiB), enters $__BOX_WORKDIR (creating it when missing), then execs the argument
# vector $__BOX_ARG_0 .. $__BOX_ARG_{__BOX_ARGC - 1} or evaluates the script $__BOX_SCRIPT.
[ -n "$__BOX_STDIN" ] || exec </dev/null
# ulimit -v is not POSIX, but dash, bash and busybox sh all have it; where a shell lacks it the
# limit cannot be applied and the prelude fails with 125 rather than run the process without it.
# shellcheck disable=SC3045
[ -z "$__BOX_ULIMIT_V" ] || ulimit -v "$__BOX_ULIMIT_V" || exit 125
cd -- "$__BOX_WORKDIR" 2>/dev/null || { mkdir -p -- "$__BOX_WORKDIR" && cd -- "$__BOX_WORKDIR"; } || { echo "box: cannot enter workdir $__BOX_WORKDIR" >&2; exit 126; }
unset __BOX_WORKDIR __BOX_STDIN __BOX_ULIMIT_V
if [ -n "${__BOX_ARGC:-}" ]; then
  __box_i=0; set --
  while [ "$__box_i" -lt "$__BOX_ARGC" ]; do
    eval "set -- \"\$@\" \"\$__BOX_ARG_$__box_i\"; unset __BOX_ARG_$__box_i"
    __box_i=$((__box_i + 1))
  done
  unset __box_i __BOX_ARGC
  exec "$@"
fi
__box_s=$__BOX_SCRIPT; unset __BOX_SCRIPT
eval "unset __box_s; $__box_s"
