# shellcheck shell=sh
# The shell of a terminal (ProcessManager.openTerminal), run by the process prelude inside the
# sandbox: bash when the sandbox has it, else its sh; a login shell either way.
if command -v bash >/dev/null 2>&1; then
  exec bash -l
fi
exec sh -l
