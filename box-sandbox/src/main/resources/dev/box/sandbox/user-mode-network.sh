# shellcheck shell=sh
# Runs slirp4netns, as `sh -c SCRIPT box-net SLIRP4NETNS PID`, for the network namespace of PID.
# fd 3 is the original stdout (the ready byte), fd 4 the standard input (its end ends slirp4netns),
# and slirp4netns's own messages go to stderr.
exec 3>&1 1>&2 4<&0
exec "$1" --configure --mtu=65520 --disable-host-loopback --enable-sandbox --enable-seccomp \
  --ready-fd=3 --exit-fd=4 "$2" tap0
