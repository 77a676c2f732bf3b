# shellcheck shell=sh
# Writes $1 bytes of "y" lines (2 bytes each) as fast as it can: the line-mode relay's load.
yes | head -c "$1"
