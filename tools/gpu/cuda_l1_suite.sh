#!/usr/bin/env bash
# The CUDA-L1 regression suite on a GPU machine, in one call: unpacks the
# Debian packages (when given), builds crucible-bench-eval there (the
# evaluator alone, no LibTorch, as kernelbench_eval.sh does) and runs
# `cuda_l1_suite.py run` with the remaining arguments: the selected kernels
# of a CUDA-L1 file (or KernelBench's identity candidates) evaluated on
# cuda:0 within --budget-s, merged into the results file, and tabled.
# docs/gpu.md, "The CUDA-L1 corpus as a regression suite".
#
# Usage: tools/gpu/cuda_l1_suite.sh DEB_DIR|- RUN_ARGS...
#   DEB_DIR   Debian 12 packages of crucible's dependencies, unpacked into /
#             first (docs/gpu.md step 1); `-` where they are installed
#   RUN_ARGS  cuda_l1_suite.py run's: the source (--corpus .cl1/a100.json or
#             --identity .kb), the selection (--all, --level N, --tasks
#             L1-19,L2-39, --sample K --seed S), --budget-s (1800; leave the
#             set-up's minute out of the call's limit), --previous FILE (an
#             earlier run's results.jsonl, carried), --notes FILE; paths
#             relative to the folder this is called from. ../shared does
#             not travel to the device: carry a copy.
# Environment: PYTHON (default /opt/torch/.venv/bin/python3 where it exists,
# else python3) must import torch with CUDA; WORK (/tmp/crucible-cuda-l1):
# the kernels, jobs and compile cache; RESULTS (default WORK): where
# results.jsonl, each pass's JSON lines, log and throughput table, and
# table.md go (RESULTS=$OUT brings them back); BENCH: an already built
# crucible-bench-eval (no build).
set -uo pipefail
if (($# < 1)); then
  sed -n '2,/^set -uo/p' "$0" | grep '^#'
  exit 2
fi
debs=$1
shift
repo=$(realpath "$(dirname "$0")/../..")
py=${PYTHON:-$([[ -x /opt/torch/.venv/bin/python3 ]] && echo /opt/torch/.venv/bin/python3 || echo python3)}
work=${WORK:-/tmp/crucible-cuda-l1}
res=${RESULTS:-$work}
build=$repo/build-gpu-eval
mkdir -p "$work" "$res"
t_start=$SECONDS

source "$repo/tools/gpu/kernelbench_common.sh"
if [[ -z "${BENCH:-}" ]]; then
  [[ "$debs" != - ]] && unpack_debs "$(realpath "$debs")"
  # build_evaluator works in the source tree (cmake -S .): a subshell there,
  # so that RUN_ARGS' relative paths still mean the caller's folder.
  (cd "$repo" && build_evaluator "$build" "$py" "$work" crucible-bench-eval) || exit 1
  BENCH=$build/bin/crucible-bench-eval
  echo "build and set-up: $((SECONDS - t_start)) s"
fi
"$py" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0))'
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
export CUDA_HOME=${CUDA_HOME:-$([[ -d /usr/local/cuda ]] && echo /usr/local/cuda)}

# The wrapper's defaults first: RUN_ARGS after them win (argparse keeps the last).
"$py" "$repo/tools/gpu/cuda_l1_suite.py" run --work "$work" --bench "$BENCH" --results "$res/results.jsonl" "$@"
status=$?
echo "total: $((SECONDS - t_start)) s"
exit $status
