#!/usr/bin/env bash
# Configures (once) and builds crucible, holding a lock so that two builds
# never run at once on this 2-core machine. Usage: tools/build.sh [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
exec 9>/tmp/crucible-build.lock
flock 9
[[ -f build/build.ninja ]] || cmake --preset default >/dev/null
if (($#)); then
  cmake --build build -j2 --target "$@"
else
  cmake --build build -j2
fi
