# shellcheck shell=sh
# Keeps a container running while its server beats the lease, as `sh -c SCRIPT box-lease FILE
# INTERVAL MISSES [COMMAND [ARG ...]]`: reads the counter in FILE every INTERVAL seconds and exits
# once it has not changed for MISSES reads in a row (a missing file counts as no beat). A COMMAND
# (the exec agent) runs beside the watch, with no standard streams, again a second after each time
# it ends, until the container ends.
file=$1 interval=$2 misses=$3
shift 3
if [ "$#" -gt 0 ]; then
  while :; do "$@"; sleep 1; done </dev/null >/dev/null 2>&1 &
fi
last=; still=0
while :; do
  sleep "$interval"
  now=; read -r now < "$file" 2>/dev/null
  if [ -n "$now" ] && [ "$now" != "$last" ]; then still=0; last=$now; else still=$((still+1)); fi
  [ "$still" -lt "$misses" ] || exit 0
done
