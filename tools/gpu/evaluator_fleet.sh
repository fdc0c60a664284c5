#!/usr/bin/env bash
# Issues 3, 4 and 9 on one 4-GPU machine, in one call: the evaluator fleet
# (evaluator_fleet.py: one evaluator per GPU, one shared queue) over issue
# 3's KernelBench jobs (20 identity candidates, the known-faster rewrites,
# an inline CUDA candidate), with the sandbox defences on, as three passes:
#   phase 1, side by side on disjoint GPUs:
#     cuda:0      the 1-GPU fleet, pass 1
#     cuda:2,3    the 2-GPU fleet, pass 2
#     cuda:1      the KernelBench-style baseline (3 repeats)
#     then each GPU whose work is done takes hack-catalogue cases
#     (hacks_gpu.sh, shared queue) until the 1-GPU fleet ends;
#   phase 2: the 4-GPU fleet, pass 3;
#   phase 3: the rest of the hack catalogue on all 4 GPUs.
# The three passes are each job's 3 repeats (issue 3) and the fleet rows of
# issue 9; repeats on different GPUs under load give verification's
# agreement. Tables: kernelbench_table.py (issue 3), fleet_table.py (issue
# 9) and the catalogue's PASS/FAIL rows (issue 4).
#
# Usage: tools/gpu/evaluator_fleet.sh KERNELBENCH_DIR [DEB_DIR]  (as kernelbench_eval.sh)
# Environment: RESULTS (where the JSON lines, logs and tables go; at most
# 8 files); BUDGET_S (530): everything ends within that many seconds of the
# start; WINDOW_S (30): the measurement window (the default protocol's is
# 120 s; it limits only evaluations that never meet the early stop); PYTHON.
set -uo pipefail
if (($# < 1)); then
  sed -n '2,/^set -uo/p' "$0" | grep '^#'
  exit 2
fi
kb=$(realpath "$1")
debs=${2:-}
cd "$(dirname "$0")/../.."
repo=$PWD
py=${PYTHON:-$([[ -x /opt/torch/.venv/bin/python3 ]] && echo /opt/torch/.venv/bin/python3 || echo python3)}
work=/tmp/crucible-fleet
build=$repo/build-gpu-eval
res=${RESULTS:-$work}
end=$((SECONDS + ${BUDGET_S:-530}))
rm -rf "$work" && mkdir -p "$work/hackq" "$res"
export CUDA_HOME=${CUDA_HOME:-$([[ -d /usr/local/cuda ]] && echo /usr/local/cuda)}

source "$repo/tools/gpu/kernelbench_common.sh"
[[ -n "$debs" ]] && unpack_debs "$debs"
build_evaluator "$build" "$py" "$work" crucible-eval || exit 1
bin=$build/bin/crucible-eval
echo "set-up: $SECONDS s"
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
kernelbench_jobs "$kb" "$work"
cat "$work/jobs.txt" "$work/jobs_compile.txt" >"$work/fleet_jobs.txt"

left() {  # left N: seconds until N seconds before the end (0 when past)
  local s=$((end - $1 - SECONDS))
  echo $((s > 0 ? s : 0))
}
fleet() {  # fleet GPUS REPEAT_INDEX SECONDS_BEFORE_END
  "$py" "$repo/tools/gpu/evaluator_fleet.py" --bin "$bin" --jobs "$work/fleet_jobs.txt" --gpus "$1" \
    --out "$res/fleet$(($(tr -cd , <<<"$1" | wc -c) + 1)).jsonl" --repeat-index "$2" \
    --window-s "${WINDOW_S:-30}" --deadline-s "$(left "$3")" --cache-dir "$work/cache"
}
hacks() {  # hacks GPU: catalogue cases from the shared queue until it is empty or stopped
  QUEUE=$work/hackq CORES=$((20 + $1)) "$repo/tools/gpu/hacks_gpu.sh" "$bin" "cuda:$1" >>"$work/hacks$1.log" 2>&1
}

echo "=== phase 1: 1-GPU fleet on cuda:0, 2-GPU fleet on cuda:2,3, baseline on cuda:1"
fleet 0 1 150 &
one=$!
{
  CUDA_VISIBLE_DEVICES=1 timeout "$(left 150)" "$py" "$repo/tools/gpu/kernelbench_style_timing.py" \
    --jobs "$work/jobs.txt" --repeat 3 --out "$res/kernelbench_style.jsonl"
  echo "baseline done at $SECONDS s"
  hacks 1
} &
base=$!
{ fleet 2,3 2 150; echo "2-GPU fleet done at $SECONDS s"; hacks 2 & hacks 3; wait; } &
two=$!
wait $one
echo "1-GPU fleet done at $SECONDS s"
touch "$work/hackq/stop"
wait $base $two

echo "=== phase 2: 4-GPU fleet at $SECONDS s"
fleet 0,1,2,3 3 45

echo "=== phase 3: the rest of the hack catalogue at $SECONDS s"
rm -f "$work/hackq/stop"
(sleep "$(left 20)"; touch "$work/hackq/stop") &
stopper=$!
for g in 0 1 2 3; do hacks $g & done
wait $(jobs -p | grep -vx "$stopper")
kill "$stopper" 2>/dev/null

echo "=== tables at $SECONDS s"
cat "$work"/hacks*.log >"$res/hacks.log"
grep -h '^PASS\|^FAIL' "$res/hacks.log" | sort -k2 | tee "$res/hacks_table.txt"
echo "hack catalogue: $(grep -c '^PASS' "$res/hacks_table.txt") passed, $(grep -c '^FAIL' "$res/hacks_table.txt") failed," \
  "$(ls "$work/hackq" | grep -cv stop) of $(($(grep -c . <(grep -v '^#' tests/hacks/manifest.txt)) + \
  $(ls configs/tasks/cpu/*/{faster,equal,slower}.py 2>/dev/null | wc -l))) cases reached"
grep -hv '"summary"' "$res"/fleet*.jsonl >"$work/crucible.jsonl"
{
  "$py" "$repo/tools/gpu/kernelbench_table.py" "$work/crucible.jsonl" "$res/kernelbench_style.jsonl"
  echo
  "$py" "$repo/tools/gpu/fleet_table.py" "$res"/fleet*.jsonl
} | tee "$res/tables.md"
echo "total: $SECONDS s"
