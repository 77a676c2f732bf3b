# shellcheck shell=sh
# Reports, one line each, the namespaces of this process (pid=, user=, mnt=, net=), whether the host
# path $BOX_PROBE_HIDDEN is visible (hidden=visible or hidden=absent), and the network interfaces it
# sees (ifaces=, space-separated).
for ns in pid user mnt net; do
  printf '%s=%s\n' $ns "$(readlink /proc/self/ns/$ns)"
done
if [ -e "$BOX_PROBE_HIDDEN" ]; then echo hidden=visible; else echo hidden=absent; fi
printf 'ifaces='
tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\n' ' '
echo
