# shellcheck shell=sh
# Run as `sh -lc SCRIPT sh DIR PROGRAM [ARG ...]`: execs the program in the virtualenv DIR/.venv.
# The login shell reads the profile first, so the virtualenv's PATH is set after it.
export VIRTUAL_ENV="$1/.venv"
export PATH="$1/.venv/bin:$PATH"
shift
exec "$@"
