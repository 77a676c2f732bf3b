# shellcheck shell=sh
echo "hello, $1"
