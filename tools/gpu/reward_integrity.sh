#!/usr/bin/env bash
# Issues 17 and 18 on a GPU machine, in one call: builds the evaluator there
# (crucible-eval and crucible-bench-eval, no LibTorch), then, each step
# within what is left of BUDGET_S:
#   1. the CUDA cases of the hack catalogue, the stream probes among them
#      (tools/gpu/hacks_gpu.sh, ONLY=tests/hacks/cuda);
#   2. native code on the GPU node: tools/native_escape.py;
#   3. throughput: the KernelBench jobs of kernelbench_eval.sh through
#      `crucible-bench-eval --compare-cold` (cold start, then warm spares),
#      with nvidia-smi sampling the GPU's utilisation every 200 ms, and its
#      clocks, power and temperature every 100 ms (each evaluation's timed
#      phase in clocks.md, tools/gpu/gpu_clocks.py);
#   4. the real corpus: tools/gpu/cuda_l1_suite.py run with SUITE_ARGS
#      (default: KernelBench's identity candidates, all 250).
# Usage: tools/gpu/reward_integrity.sh KERNELBENCH_DIR DEB_DIR
# Environment: PYTHON (default /opt/torch/.venv/bin/python3); BUDGET_S
# (540); STEPS ("1 2 3 4"); RESULTS (where files go, all of them also in
# RESULTS/all.tgz at the end; RESULTS=$OUT brings them back); SUITE_ARGS; REPEAT (1, for step 3); COMPARE_ONLY (job name
# prefixes step 3 keeps); PROBE=1 first times CUDA's start under Landlock
# (tools/gpu/landlock_probe.py), a worker's start and task load step by
# step (tools/gpu/worker_start_probe.py, into start_probe.txt) and where a
# timed round's seconds go (tools/gpu/round_probe.py, into round_probe.txt,
# with the stream fence's loops in Python and native).
set -uo pipefail
if (($# < 2)); then
  sed -n '2,/^set -uo/p' "$0" | grep '^#'
  exit 2
fi
kb=$(realpath "$1")
debs=$(realpath "$2")
caller=$PWD  # SUITE_ARGS' and RESULTS' relative paths are the caller's, also when run from a snapshot
res=$(realpath -m "${RESULTS:-/tmp/crucible-integrity}")
cd "$(dirname "$0")/../.."
repo=$PWD
py=${PYTHON:-$([[ -x /opt/torch/.venv/bin/python3 ]] && echo /opt/torch/.venv/bin/python3 || echo python3)}
work=/tmp/crucible-integrity
build=$repo/build-gpu-eval
steps=${STEPS:-1 2 3 4}
rm -rf "$work" && mkdir -p "$work" "$res"
deadline=$((SECONDS + ${BUDGET_S:-540}))
left() { echo $((deadline - SECONDS)); }

source "$repo/tools/gpu/kernelbench_common.sh"
unpack_debs "$debs"
build_evaluator "$build" "$py" "$work" crucible-eval crucible-bench-eval || exit 1
echo "build and set-up: $SECONDS s"
"$py" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0))'
uname -r
export CUDA_HOME=${CUDA_HOME:-$([[ -d /usr/local/cuda ]] && echo /usr/local/cuda)}
# crucible's workers run CRUCIBLE_PYTHON, the torch venv's Python (build_evaluator).

if [[ "${PROBE:-0}" == 1 ]]; then
  for v in none fs+/proc/self; do "$py" tools/gpu/landlock_probe.py "$v" 2>&1 | tail -1; done
  CUDA_VISIBLE_DEVICES=0 "$py" tools/gpu/worker_start_probe.py "$kb/level1/19_ReLU.py" "$build/generated/python" 2>&1 |
    tee "$res/start_probe.txt" | head -1
  # Each task's rounds with the stream fence's loops in Python, then native
  # (stream_fence.cpp, as the evaluator's workers run them).
  fence_lib=$build/lib/libcrucible_stream_fence.so
  for t in level1/19_ReLU.py level2/12_Gemm_Multiply_LeakyReLU.py; do
    for lib in "" "$fence_lib"; do
      echo "round_probe $t fence: ${lib:-python}" >>"$res/round_probe.txt"
      CRUCIBLE_STREAM_FENCE=$lib CUDA_VISIBLE_DEVICES=0 "$py" tools/gpu/round_probe.py "$kb/$t" \
        "$build/generated/python" 300 2>&1 | tee -a "$res/round_probe.txt" | grep '^round_probe'
    done
  done
  # Identities that settled off 1.00 (issue 17): does their ratio move with
  # where the candidate's weights are placed, or invert when the two model
  # objects swap roles (round_probe.py PLACEMENT, SWAP)?
  for t in level2/62_Matmul_GroupNorm_LeakyReLU_Sum.py level3/2_ShallowWideMLP.py; do
    echo "round_probe $t placement" >>"$res/round_probe.txt"
    PLACEMENT=2 SWAP=1 CRUCIBLE_STREAM_FENCE=$fence_lib CUDA_VISIBLE_DEVICES=0 "$py" tools/gpu/round_probe.py "$kb/$t" \
      "$build/generated/python" 300 2>&1 | tee -a "$res/round_probe.txt" | grep '^round_probe'
  done
fi
if [[ " $steps " == *" 1 "* ]]; then
  echo "=== 1. the CUDA hack catalogue"
  ONLY='tests/hacks/cuda' timeout "$(left)" tools/gpu/hacks_gpu.sh "$build/bin/crucible-eval" cuda:0 |
    tee "$res/hacks_cuda.txt"
fi
if [[ " $steps " == *" 2 "* ]]; then
  echo "=== 2. native code on the GPU node"
  timeout "$(left)" "$py" tools/native_escape.py "$build/bin/crucible-eval" tests/hacks/tasks/cuda_elementwise.py \
    cuda:0 | tee "$res/native_escape.txt"
fi
if [[ " $steps " == *" 3 "* ]]; then
  echo "=== 3. warm workers against the cold start"
  kernelbench_jobs "$kb" "$work"
  if [[ -n "${COMPARE_ONLY:-}" ]]; then  # "identity/L1-12 faster/L1-12 ..." keeps those jobs
    grep -E "^(${COMPARE_ONLY// /|})" "$work/jobs.txt" >"$work/jobs.only" && mv "$work/jobs.only" "$work/jobs.txt"
  fi
  nvidia-smi --query-gpu=timestamp,utilization.gpu --format=csv,noheader,nounits -lms 200 >"$res/gpu_util.csv" &
  sampler=$!
  # Clocks, power and temperature beside it (a second sampler: a query this
  # driver refuses loses only these; tools/gpu/gpu_clocks.py).
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
    --format=csv,noheader,nounits -lms 100 >"$res/gpu_clocks.csv" 2>&1 &
  clock_sampler=$!
  timeout "$(left)" "$build/bin/crucible-bench-eval" --device cuda:0 --protocol default --jobs "$work/jobs.txt" \
    --repeat "${REPEAT:-1}" --compare-cold --json-out "$res/compare_cold.jsonl" --cache-dir "$work/cache" \
    2>"$res/compare_cold.log" | tee "$res/compare_cold.md"
  kill "$sampler" "$clock_sampler"
  "$py" tools/gpu/gpu_busy.py "$res/gpu_util.csv" "$res/compare_cold.jsonl" | tee -a "$res/compare_cold.md"
  "$py" tools/gpu/gpu_clocks.py "$res/gpu_clocks.csv" "$res/compare_cold.jsonl" | tee "$res/clocks.md"
fi
if [[ " $steps " == *" 4 "* ]]; then
  echo "=== 4. the real corpus"
  # shellcheck disable=SC2086
  (cd "$caller" && "$py" "$repo/tools/gpu/cuda_l1_suite.py" run --work "$work/suite" \
    --bench "$build/bin/crucible-bench-eval" --results "$res/results.jsonl" --budget-s "$(left)" \
    ${SUITE_ARGS:---identity $kb --all})
fi
echo "total: $SECONDS s"
# Every file in one archive that sorts first: the device tool brings back only
# the first few files of $OUT (docs/gpu.md).
# Written outside RESULTS first (tar stops at a folder that changes as it
# reads it).
tgz=$(mktemp /tmp/crucible-results.XXXXXX) && tar czf "$tgz" -C "$res" --exclude all.tgz . && mv "$tgz" "$res/all.tgz"
