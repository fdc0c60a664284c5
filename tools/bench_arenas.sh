#!/usr/bin/env bash
# Stage 3 of the CPU quick-start, GROUPS groups (12), with glibc's malloc
# arenas as crucible sets them (one) against MALLOC_ARENA_MAX=16 (glibc's
# default on 2 cores: the peer), each run from the same stage-1 policy:
# STAGE1 (default build/test-cache/quickstart-stage1, which loop_test's
# quick-start case leaves: policy/ and stage1.json). Prints per arm the
# stage-3 seconds, and /usr/bin/time's user and system seconds and minor
# page faults (the sandbox workers' included). ARMS="one peer" sets the
# order. Usage: tools/bench_arenas.sh [WORK_DIR (/tmp/bench-arenas)]
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
work=${1:-/tmp/bench-arenas}
stage1=${STAGE1:-build/test-cache/quickstart-stage1}
[[ -f $stage1/stage1.json ]] || { echo "bench_arenas.sh: no stage 1 in $stage1 (run loop_test's quick-start case)"; exit 2; }
for arm in ${ARMS:-one peer}; do
  d=$work/$arm
  rm -rf "$d" && mkdir -p "$d/run/stage1"
  cp -r "$stage1/policy" "$d/run/stage1/v-250"
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); r["policy"]=sys.argv[2]; print(json.dumps(r))' \
    "$stage1/stage1.json" "$d/run/stage1/v-250" >"$d/run/stage1.json"
  sed -e "s/^groups = 40/groups = ${GROUPS:-12}/" -e "s|\"configs/|\"$repo/configs/|g" configs/quickstart.toml >"$d/cfg.toml"
  env=()
  [[ $arm == peer ]] && env=(MALLOC_ARENA_MAX=16)
  env "${env[@]}" /usr/bin/time -v build/bin/crucible run "$d/cfg.toml" --run-dir "$d/run" >"$d/out.txt" 2>"$d/time.txt"
  echo "$arm: stage 3 $(grep 'stage 3: \[' "$d/out.txt" | tail -1 | sed 's/.*| //');" \
    "$(grep -E 'User time|System time|Minor' "$d/time.txt" | tr -s ' \t' ' ' | tr '\n' ';')"
done
