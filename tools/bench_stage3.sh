#!/usr/bin/env bash
# Stage 3 of the CPU quick-start, STAGE3_GROUPS groups (40), run once per arm from
# the same stage-1 policy: STAGE1 (default build/test-cache/quickstart-stage1,
# which loop_test's quick-start case leaves: policy/ and stage1.json). Each
# arm is configs/quickstart.toml as it is, but for what the arm names:
#   reuse-on    the built default ([referee] reuse_identical = true)
#   reuse-off   every candidate measured: reuse_identical = false (the peer)
#   arenas-one  the built default (one malloc arena)
#   arenas-peer MALLOC_ARENA_MAX=16, glibc's default on 2 cores (the peer)
# Prints per arm the stage-3 seconds, the candidates measured (the rest took an
# identical one's measurement), the first and last fifth's mean reward and
# success rate, the evaluators' busy share, and /usr/bin/time's
# user and system seconds and minor page faults (the sandbox workers'
# included). ARMS sets the arms and their order (default "reuse-on
# reuse-off"). Usage: tools/bench_stage3.sh [WORK_DIR (/tmp/bench-stage3)]
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
work=${1:-/tmp/bench-stage3}
stage1=${STAGE1:-build/test-cache/quickstart-stage1}
[[ -f $stage1/stage1.json ]] || { echo "bench_stage3.sh: no stage 1 in $stage1 (run loop_test's quick-start case)"; exit 2; }
for arm in ${ARMS:-reuse-on reuse-off}; do
  d=$work/$arm
  rm -rf "$d" && mkdir -p "$d/run/stage1"
  cp -r "$stage1/policy" "$d/run/stage1/v-250"
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); r["policy"]=sys.argv[2]; print(json.dumps(r))' \
    "$stage1/stage1.json" "$d/run/stage1/v-250" >"$d/run/stage1.json"
  sed -e "s/^groups = 40/groups = ${STAGE3_GROUPS:-40}/" -e "s|\"configs/|\"$repo/configs/|g" configs/quickstart.toml >"$d/cfg.toml"
  env=()
  case $arm in
    reuse-on | arenas-one) ;;
    reuse-off) sed -i 's/^\[referee\]/[referee]\nreuse_identical = false/' "$d/cfg.toml" ;;
    arenas-peer) env=(MALLOC_ARENA_MAX=16) ;;
    *) echo "bench_stage3.sh: unknown arm '$arm'"; exit 2 ;;
  esac
  env "${env[@]}" /usr/bin/time -v build/bin/crucible run "$d/cfg.toml" --run-dir "$d/run" >"$d/out.txt" 2>"$d/time.txt"
  figures=$(python3 - "$d/run" <<'P'
import json, sys
s = json.load(open(sys.argv[1] + "/summary.json"))
rows = [json.loads(l) for l in open(sys.argv[1] + "/settlements.jsonl")]
measured = sum(1 for r in rows if r["status"] != "NoCode" and not r.get("measurement_of"))
f, l = s["first_fifth"], s["last_fifth"]
print(f"stage 3 {s['elapsed_s']:.0f} s; {measured} of {len(rows)} candidates measured; "
      f"reward {f['mean_reward']:.2f} -> {l['mean_reward']:.2f}, success {f['success_rate']:.2f} -> {l['success_rate']:.2f}; "
      f"evaluators busy {s.get('evaluator_busy_fraction', 0):.2f};")
P
)
  echo "$arm: $figures $(grep -E 'User time|System time|Minor' "$d/time.txt" | tr -s ' \t' ' ' | tr '\n' ';')"
done
