# shellcheck shell=sh
# Run as `sh -c SCRIPT box-pool SLOTS STAGING`: makes the directory SLOTS a mount with shared
# propagation and STAGING a private one.
mount --bind "$1" "$1" && mount --make-shared "$1" &&
  mount --bind "$2" "$2" && mount --make-private "$2"
