#!/usr/bin/env bash
# Issues 3, 4 and 9 on one GPU machine, in one call: the evaluator fleet
# (evaluator_fleet.py: one evaluator per GPU, one shared queue) over issue
# 3's KernelBench jobs (20 identity candidates, the known-faster rewrites,
# an inline CUDA candidate), with the sandbox defences on, as three passes,
# pass i on the first FLEETS[i] GPUs; the GPUs a pass leaves free take
# hack-catalogue cases (hacks_gpu.sh, one shared queue) meanwhile, and
# during pass 1 cuda:1 first runs the KernelBench-style baseline (3
# repeats). Then the rest of the catalogue on every GPU until the budget
# ends. The three passes are each job's 3 repeats (issue 3) and the fleet
# rows of issue 9; repeats on different GPUs under load give verification's
# agreement. Tables: kernelbench_table.py (issue 3), fleet_table.py (issue
# 9) and the catalogue's PASS/FAIL rows (issue 4).
#
# Usage: tools/gpu/evaluator_fleet.sh KERNELBENCH_DIR [DEB_DIR]  (as kernelbench_eval.sh)
# Environment: RESULTS (where the JSON lines, logs and tables go: 7 files);
# BUDGET_S (530): everything ends within that many seconds of the start;
# FLEETS (GPUs per pass; "1 2 4" with 4 GPUs or more, else "1 2 2");
# PASS_S (240): the seconds one GPU takes for a pass, from which each pass's
# deadline leaves room for the passes after it;
# WINDOW_S (30): the measurement window (the default protocol's is 120 s;
# it limits only evaluations that never meet the early stop); HACKS (a
# regular expression: the catalogue cases and task-set variants to run;
# default all; `none`: no catalogue); REPEATS (1): each job's lines in a
# row in every pass (job after job, so that a pass cut by its deadline
# leaves whole jobs out rather than the last repeats of many; with
# REPEATS > 1 the inline candidate runs twice, the second a compile-cache
# hit); REWRITE_EVERY (3): a rewrite after every that many identity jobs;
# DRY_RUN=1 prints the queue and exits before anything needs a GPU; PYTHON.
# When the first pass takes every GPU, the baseline runs first on the last
# GPU, which joins the fleet when it is done.
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
kernelbench_jobs "$kb" "$work"
# The inline candidate first (pass 1 compiles it, later passes hit the
# cache; with REPEATS > 1 its second line comes after two more jobs, so that
# the other GPUs evaluate meanwhile and it finds the compiled extension or
# waits on the cache's lock), then a rewrite after every REWRITE_EVERY
# identity jobs, so that a pass cut by its deadline still holds some of
# each; every line REPEATS times in a row.
repeats=${REPEATS:-1}
{
  cat "$work/jobs_compile.txt"
  awk '/^identity/ { print; if (++n % E == 0 && (getline f < F) > 0) print f }
       END { while ((getline f < F) > 0) print f }' E="${REWRITE_EVERY:-3}" \
    F=<(grep -v '^identity' "$work/jobs.txt") "$work/jobs.txt" |
    awk -v R="$repeats" -v C="$(cat "$work/jobs_compile.txt")" \
      '{ for (r = 0; r < R; r++) print; if (R > 1 && NR == 2) print C }'
} >"$work/fleet_jobs.txt"
if [[ "${DRY_RUN:-0}" == 1 ]]; then
  "$py" "$repo/tools/gpu/evaluator_fleet.py" --bin - --jobs "$work/fleet_jobs.txt" --gpus 0 --out /dev/null --dry-run
  exit 0
fi
[[ -n "$debs" ]] && unpack_debs "$debs"
build_evaluator "$build" "$py" "$work" crucible-eval || exit 1
bin=$build/bin/crucible-eval
echo "set-up: $SECONDS s"
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader

left() {  # left N: seconds until N seconds before the end (0 when past)
  local s=$((end - $1 - SECONDS))
  echo $((s > 0 ? s : 0))
}
fleet() {  # fleet GPUS PASS SECONDS_BEFORE_END [evaluator_fleet.py options]
  "$py" "$repo/tools/gpu/evaluator_fleet.py" --bin "$bin" --jobs "$work/fleet_jobs.txt" --gpus "$1" \
    --out "$res/fleet-pass$2.jsonl" --repeat-index "$(((${2} - 1) * repeats + 1))" \
    --window-s "${WINDOW_S:-30}" --deadline-s "$(left "$3")" --cache-dir "$work/cache" "${@:4}"
}
baseline() {  # baseline SECONDS_BEFORE_END [GPU]: the KernelBench-style timing of the jobs on cuda:GPU (1), 3 repeats
  CUDA_VISIBLE_DEVICES=${2:-1} timeout "$(left "$1")" "$py" "$repo/tools/gpu/kernelbench_style_timing.py" \
    --jobs "$work/jobs.txt" --repeat 3 --out "$res/kernelbench_style.jsonl"
  echo "baseline done at $SECONDS s"
}
hacks() {  # hacks GPU: catalogue cases from the shared queue until it is empty or stopped
  [[ "${HACKS:-}" == none ]] && return 0
  QUEUE=$work/hackq CORES=$((20 + $1)) ONLY=${HACKS:-} "$repo/tools/gpu/hacks_gpu.sh" "$bin" "cuda:$1" >>"$work/hacks$1.log" 2>&1
}

ngpu=$(nvidia-smi -L | grep -c '^GPU')
read -ra fleets <<<"${FLEETS:-$( ((ngpu >= 4)) && echo "1 2 4" || echo "1 2 2")}"
pass=0
for n in "${fleets[@]}"; do
  pass=$((pass + 1))
  ((n <= ngpu)) || { echo "skipping a $n-GPU pass: $ngpu GPUs"; continue; }
  echo "=== pass $pass: $n-GPU fleet at $SECONDS s; the other GPUs take catalogue cases"
  reserve=$([[ "${HACKS:-}" == none ]] && echo 12 || echo 25)  # and for the passes after this one, at PASS_S / GPUs each
  for m in "${fleets[@]:pass}"; do reserve=$((reserve + ${PASS_S:-240} / m)); done
  if ((pass == 1 && n == ngpu)); then  # no GPU left free: the baseline first on the last one, which then joins
    last=$((ngpu - 1))
    { baseline "$reserve" "$last"; touch "$work/baseline.done"; } &
    fleet "$(seq -s, 0 $last)" "$pass" "$reserve" --start-after "$last:$work/baseline.done" &
  else
    fleet "$(seq -s, 0 $((n - 1)))" "$pass" "$reserve" &
  fi
  running=$!
  for ((g = n; g < ngpu; g++)); do
    if ((pass == 1 && g == 1)); then
      { baseline "$reserve"; hacks 1; } &
    else
      hacks "$g" &
    fi
  done
  wait "$running"
  echo "$n-GPU fleet done at $SECONDS s"
  touch "$work/hackq/stop"
  wait
  rm -f "$work/hackq/stop"
done

if [[ "${HACKS:-}" != none ]]; then
  echo "=== the rest of the hack catalogue on $ngpu GPUs at $SECONDS s"
  (sleep "$(left 20)"; touch "$work/hackq/stop") &
  stopper=$!
  for ((g = 0; g < ngpu; g++)); do hacks "$g" & done
  wait $(jobs -p | grep -vx "$stopper")
  kill "$stopper" 2>/dev/null
fi

echo "=== tables at $SECONDS s"
cat "$work"/hacks*.log >"$res/hacks.log" 2>/dev/null
grep -h '^PASS\|^FAIL' "$res/hacks.log" | sort -k2 | tee "$res/hacks_table.txt"
echo "hack catalogue: $(grep -c '^PASS' "$res/hacks_table.txt") passed, $(grep -c '^FAIL' "$res/hacks_table.txt") failed"
grep -hv '"summary"' "$res"/fleet-pass*.jsonl >"$work/crucible.jsonl"
{
  "$py" "$repo/tools/gpu/kernelbench_table.py" "$work/crucible.jsonl" "$res/kernelbench_style.jsonl"
  echo
  "$py" "$repo/tools/gpu/fleet_table.py" "$res"/fleet-pass*.jsonl
} | tee "$res/tables.md"
echo "total: $SECONDS s"
