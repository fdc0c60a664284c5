#!/usr/bin/env bash
# Undefined names in the sandbox worker's Python (actors/evaluator/worker):
# pyflakes (Debian's python3-pyflakes) over every file, failing on any
# report but the unused imports of the defences' package index. The CTest
# "the sandbox worker's Python uses no undefined name" runs it: the worker's
# CUDA-only paths run on no CI machine, and a NameError there crashed every
# GPU worker once (the stream fence's loader, 978f145).
# Usage: tools/check_worker_names.sh [PYTHON]
set -uo pipefail
cd "$(dirname "$0")/.."
py=${1:-python3}
out=$("$py" -m pyflakes actors/evaluator/worker 2>&1)
rc=$?
if ((rc > 1)) || [[ $out == *"No module named pyflakes"* ]]; then
  echo "check_worker_names: pyflakes did not run (python3-pyflakes installed?):"; echo "$out"; exit 2
fi
bad=$(grep -v "defences/__init__.py:.*imported but unused" <<<"$out" | grep -v '^$')
[[ -z $bad ]] && { echo "check_worker_names: no undefined names"; exit 0; }
echo "$bad"
exit 1
