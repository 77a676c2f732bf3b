# shellcheck shell=sh
# Run in the staged project's directory: creates the virtualenv .venv and installs into it the
# project's requirements.txt when $BOX_PIP_FROM is "requirements", else the project itself.
set -e
python3 -m venv .venv
if [ "$BOX_PIP_FROM" = requirements ]; then
  .venv/bin/pip install --no-input -r requirements.txt
else
  .venv/bin/pip install --no-input .
fi
