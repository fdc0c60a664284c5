#!/usr/bin/env bash
# The README's main-job command: installs what is missing, builds, and runs
# the quick-start job (configs/quickstart.toml) in a fresh run folder.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
tools/build.sh crucible
exec build/bin/crucible run configs/quickstart.toml "$@"
