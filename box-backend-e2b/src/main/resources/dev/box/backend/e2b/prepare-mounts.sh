# shellcheck shell=sh
# Creates the mount points of a session, as root: $__BOX_N of them, the i-th at $__BOX_P_i with
# mode $__BOX_M_i. A read-write one is owned by the sandbox user $__BOX_OWNER; a read-only one by
# root, mode 755, so the user cannot change what is copied into it.
i=0
# p and m are assigned by the eval, from the variables numbered i.
# shellcheck disable=SC2154
while [ "$i" -lt "$__BOX_N" ]; do
  eval "p=\$__BOX_P_$i; m=\$__BOX_M_$i"
  mkdir -p -- "$p" || exit 1
  if [ "$m" = rw ]; then chown "$__BOX_OWNER": -- "$p" || exit 1; else chown root:root -- "$p" && chmod 755 -- "$p" || exit 1; fi
  i=$((i + 1))
done
