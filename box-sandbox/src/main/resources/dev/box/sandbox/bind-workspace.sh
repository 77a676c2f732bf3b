# shellcheck shell=sh
# Run as `sh -c SCRIPT box-bind WORKSPACE STAGE SLOT`: binds WORKSPACE (recursively) at STAGE, a
# private mount point, with nosuid,nodev, then moves that mount onto SLOT, whose propagation carries
# it into the sandbox of the slot.
mount --rbind -o nosuid,nodev "$1" "$2" && mount --move "$2" "$3"
