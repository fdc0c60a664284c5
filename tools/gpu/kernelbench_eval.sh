#!/usr/bin/env bash
# Issue 3's figures on a GPU machine, in one call: builds crucible-bench-eval
# there (the evaluator alone, no LibTorch), then measures KernelBench v0
# level 1 and 2 problems with crucible's evaluator on cuda:0 and with the
# KernelBench-style baseline (kernelbench_style_timing.py), and prints one
# table (kernelbench_table.py):
#   - identity candidates (ModelNew = Model) for 20 tasks,
#   - the known-faster rewrites in tools/gpu/kernelbench_faster,
# each evaluated REPEAT times (the whole list in turn), then, with time left,
# an inline CUDA candidate (crucible only) REPEAT times, whose repeats after
# the first are compile-cache hits; and the evaluator's throughput
# (evaluations per hour, compile-cache hits and misses).
#
# Usage: tools/gpu/kernelbench_eval.sh KERNELBENCH_DIR [DEB_DIR]
#   KERNELBENCH_DIR  holds level1/ and level2/ of KernelBench v0 (../shared
#                    does not travel to the device: carry a copy, docs/gpu.md)
#   DEB_DIR          Debian 12 packages of crucible's dependencies, unpacked
#                    into / first (docs/gpu.md step 1); omit where installed
# Environment: PYTHON (default /opt/torch/.venv/bin/python3 where it exists,
# else python3) must import torch with CUDA; REPEAT (3); PROTOCOL (default);
# WORK (/tmp/crucible-kernelbench); SMOKE=1 measures two jobs once (a check
# of the set-up); RESULTS (where the JSON lines, the log and the tables go;
# default WORK); EVAL_BUDGET_S (1800) stops the evaluator's run after that
# many seconds and tables what it measured; ONLY="identity/L1-40 ..." keeps
# those jobs (no inline candidate); SKIP_BASELINE=1 skips the baseline.
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
repeat=${REPEAT:-3}
protocol=${PROTOCOL:-default}
work=${WORK:-/tmp/crucible-kernelbench}
build=$repo/build-gpu-eval
res=${RESULTS:-$work}
rm -rf "$work" && mkdir -p "$work/identity" "$res"
t_start=$SECONDS

source "$repo/tools/gpu/kernelbench_common.sh"
[[ -n "$debs" ]] && unpack_debs "$debs"
build_evaluator "$build" "$py" "$work" crucible-bench-eval || exit 1
echo "build and set-up: $((SECONDS - t_start)) s"
"$py" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0))'
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader

kernelbench_jobs "$kb" "$work"
[[ "${SMOKE:-0}" == 1 ]] && repeat=1
jobs=$work/jobs.txt
if [[ -n "${ONLY:-}" ]]; then
  grep -E "^(${ONLY// /|}) " "$jobs" >"$jobs.only"
  mv "$jobs.only" "$jobs"
fi
cp "$jobs" "$work/jobs_baseline.txt"

# The baseline first: a run of crucible stopped at its budget leaves no
# worker holding the GPU while the baseline times.
if [[ "${SKIP_BASELINE:-0}" != 1 ]]; then
  echo "=== KernelBench-style baseline ($repeat repeats)"
  "$py" "$repo/tools/gpu/kernelbench_style_timing.py" --jobs "$work/jobs_baseline.txt" --repeat "$repeat" \
    --out "$res/kernelbench_style.jsonl" || echo "baseline failed"
  echo "baseline done: $((SECONDS - t_start)) s"
fi

echo "=== crucible's evaluator on cuda:0 (protocol $protocol, $repeat repeats)"
export CUDA_HOME=${CUDA_HOME:-$([[ -d /usr/local/cuda ]] && echo /usr/local/cuda)}
deadline=$((SECONDS + ${EVAL_BUDGET_S:-1800}))
evaluate() {  # evaluate JOBS_FILE JSON_OUT: crucible-bench-eval within what is left of the budget
  local left=$((deadline - SECONDS))
  ((left > 0)) || return
  timeout "$left" "$build/bin/crucible-bench-eval" --device cuda:0 --protocol "$protocol" \
    --jobs "$1" --repeat "$repeat" --json-out "$2" --cache-dir "$work/cache" 2>>"$res/evaluations.log"
  echo "evaluator exit $? after $((SECONDS - t_start)) s"
}
evaluate "$jobs" "$res/crucible.jsonl" | tee "$res/throughput.md"
# Last, and only with time left: an inline CUDA candidate, compiled by the
# first of its repeats (nvcc), compile-cache hits after.
if [[ "${SMOKE:-0}" != 1 && -z "${ONLY:-}" ]] && ((deadline - SECONDS > 60)); then
  evaluate "$work/jobs_compile.txt" "$work/compile.jsonl" | tee -a "$res/throughput.md"
  cat "$work/compile.jsonl" >>"$res/crucible.jsonl" 2>/dev/null
fi
tail -3 "$res/evaluations.log"

echo "=== table"
"$py" "$repo/tools/gpu/kernelbench_table.py" "$res/crucible.jsonl" "$res/kernelbench_style.jsonl" | tee "$res/table.md"
echo "total: $((SECONDS - t_start)) s"
