# shellcheck shell=sh
# Hides the files of /proc that tell too much about the host or touch the kernel, as Docker masks
# them. Run as host root in a jail's mount namespace: nsjail cannot mount over files of a /proc it
# mounts itself.
for f in /proc/kcore /proc/keys /proc/key-users /proc/latency_stats /proc/timer_list \
  /proc/timer_stats /proc/sched_debug /proc/kallsyms /proc/sysrq-trigger; do
  if [ -e "$f" ]; then mount --bind /dev/null "$f" || exit 1; fi
done
for d in /proc/acpi /proc/scsi /proc/asound /proc/driver; do
  if [ -d "$d" ]; then mount -t tmpfs -o ro,mode=0555 tmpfs "$d" || exit 1; fi
done
