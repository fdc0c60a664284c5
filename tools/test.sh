#!/usr/bin/env bash
# The README's test command: installs what is missing, builds everything, runs
# the whole test suite (unit, integration, end to end) with CTest, then the
# fuzzers' short run (every fuzzer of fuzz/ for 10 s on its seeds and kept
# crash inputs, in build-fuzz; tools/fuzz.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
tools/build.sh
ctest --test-dir build --output-on-failure -j2 --timeout 900
tools/fuzz.sh 10
