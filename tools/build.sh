#!/usr/bin/env bash
# Configures (once) and builds crucible, holding a lock so that two builds
# never run at once on this 2-core machine. Usage: tools/build.sh [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
exec 9>/tmp/crucible-build.lock
flock 9
# CRUCIBLE_BUILD_DIR and CRUCIBLE_CMAKE_ARGS let one engineer build a subset
# in a folder of their own while others' work is half done.
dir="${CRUCIBLE_BUILD_DIR:-build}"
if [[ ! -f "$dir/build.ninja" ]]; then
  # shellcheck disable=SC2086
  cmake --preset default -B "$dir" ${CRUCIBLE_CMAKE_ARGS:-} >/dev/null
fi
if (($#)); then
  cmake --build "$dir" -j2 --target "$@"
else
  cmake --build "$dir" -j2
fi
