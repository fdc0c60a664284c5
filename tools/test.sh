#!/usr/bin/env bash
# The README's test command: installs what is missing, builds everything and
# runs the whole test suite (unit, integration, end to end) with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
tools/build.sh
ctest --test-dir build --output-on-failure -j2 --timeout 900
