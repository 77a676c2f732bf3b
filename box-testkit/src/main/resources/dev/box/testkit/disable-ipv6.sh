# shellcheck shell=sh
# Turns IPv6 off in the network namespace it runs in, where the kernel has it.
for f in /proc/sys/net/ipv6/conf/all/disable_ipv6 /proc/sys/net/ipv6/conf/default/disable_ipv6; do
  if [ -e $f ]; then echo 1 > $f; fi
done
