# shellcheck shell=sh
# Removes the file $BOX_TMP_NAME beside $BOX_PATH: what an aborted write left.
rm -f -- "$(dirname -- "$BOX_PATH")/$BOX_TMP_NAME"
