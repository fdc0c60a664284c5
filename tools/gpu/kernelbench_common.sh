# Sourced by the KernelBench scripts of tools/gpu (kernelbench_eval.sh,
# evaluator_fleet.sh): the set-up of a bare GPU machine, the build of the
# evaluator there and issue 3's job list. Functions only; the caller sets
# `set -uo pipefail` and its own variables.

# unpack_debs DIR: Debian 12 packages of crucible's dependencies into /usr
# (docs/gpu.md step 2; `-n` never overwrites what the machine has).
unpack_debs() {
  echo "=== Debian packages from $1"
  mkdir -p /tmp/deb && for f in "$1"/*.deb; do dpkg -x "$f" /tmp/deb; done
  cp -rn /tmp/deb/usr/* /usr/ 2>/dev/null
  ldconfig
}

# build_evaluator BUILD_DIR PYTHON LOG_DIR TARGET...: the evaluator alone (no
# LibTorch) against PYTHON, whose torch the sandbox workers use; the
# flatbuffers Python runtime copied beside the generated code when PYTHON
# lacks it (the torch venv does).
build_evaluator() {
  local build=$1 py=$2 logs=$3
  shift 3
  local gen
  gen=$(command -v ninja >/dev/null && echo Ninja || echo "Unix Makefiles")
  echo "=== build ($build: $*)"
  cmake -S . -B "$build" -G "$gen" -DCMAKE_BUILD_TYPE=Release -DCRUCIBLE_WITH_TORCH=OFF -DCRUCIBLE_TESTS=OFF \
    -DCRUCIBLE_ACTORS=evaluator -DCRUCIBLE_PYTHON="$(command -v "$py")" >"$logs/cmake.log" 2>&1 ||
    { tail -40 "$logs/cmake.log"; return 1; }
  cmake --build "$build" -j"${JOBS:-$(nproc)}" --target "$@" >"$logs/build.log" 2>&1 ||
    { tail -40 "$logs/build.log"; return 1; }
  python_flatbuffers "$build" "$py"
}

# python_flatbuffers BUILD_DIR PYTHON: the flatbuffers Python runtime beside
# the generated code when PYTHON lacks it (the torch venv does).
python_flatbuffers() {
  if ! "$2" -c 'import flatbuffers' 2>/dev/null; then
    local d
    for d in "$PWD/.pyflat/flatbuffers" /usr/lib/python3/dist-packages/flatbuffers; do
      [[ -d "$d" ]] && { cp -r "$d" "$1/generated/python/"; break; }
    done
  fi
}

# build_crucible BUILD_DIR PYTHON WORK: the whole crucible binary against
# PYTHON's LibTorch (CUDA), after unpack_debs; sets LD_LIBRARY_PATH for it.
# PyTorch's include folder carries its own fmt (12), which spdlog 1.10
# cannot use: Debian's fmt 9 goes first (a plain -I precedes torch's -isystem).
build_crucible() {
  local build=$1 py=$2 work=$3 arch torch_cmake torch_lib start=$SECONDS
  arch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
  torch_cmake=$("$py" -c 'import torch; print(torch.utils.cmake_prefix_path)')
  torch_lib=$("$py" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
  export LD_LIBRARY_PATH="$torch_lib:/usr/lib/$arch:${LD_LIBRARY_PATH:-}"
  echo "=== build ($build, -j${JOBS:-$(nproc)})"
  mkdir -p "$work/fmt9" && cp -r /tmp/deb/usr/include/fmt "$work/fmt9/"
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCRUCIBLE_TESTS=OFF -DCRUCIBLE_WITH_NCCL=OFF \
    -DCMAKE_CXX_FLAGS="-I$work/fmt9" \
    -DCRUCIBLE_PYTHON="$py" -DCMAKE_PREFIX_PATH="$torch_cmake;/usr;/usr/lib/$arch/cmake" \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DTORCH_CUDA_ARCH_LIST=9.0 >"$work/cmake.log" 2>&1 ||
    { tail -40 "$work/cmake.log"; return 1; }
  cmake --build "$build" -j"${JOBS:-$(nproc)}" --target crucible >"$work/build.log" 2>&1 ||
    { grep -B2 -A12 "error" "$work/build.log" | head -80; return 1; }
  echo "built in $((SECONDS - start)) s"
  python_flatbuffers "$build" "$py"
}

# kernelbench_jobs KERNELBENCH_DIR WORK: issue 3's jobs as `NAME TASK
# CANDIDATE` lines (crucible-bench-eval --jobs), into WORK/jobs.txt: identity
# candidates (the task file plus `ModelNew = Model`, written under
# WORK/identity) of 20 level 1 and 2 tasks, then the known-faster rewrites of
# tools/gpu/kernelbench_faster; and WORK/jobs_compile.txt, an inline CUDA
# candidate whose evaluations after the first are compile-cache hits.
# SMOKE=1 keeps one identity and one rewrite.
kernelbench_jobs() {
  local kb=$1 work=$2 repo=$PWD t f c
  local identity=(level1/1_Square_matrix_multiplication_ level1/4_Matrix_vector_multiplication_
    level1/9_Tall_skinny_matrix_multiplication_ level1/12_Matmul_with_diagonal_matrices_ level1/19_ReLU
    level1/23_Softmax level1/26_GELU_ level1/36_RMSNorm_ level1/40_LayerNorm
    level1/47_Sum_reduction_over_a_dimension level1/88_MinGPTNewGelu level1/97_CosineSimilarityLoss
    level2/1_Conv2D_ReLU_BiasAdd level2/12_Gemm_Multiply_LeakyReLU level2/14_Gemm_Divide_Sum_Scaling
    level2/18_Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp level2/29_Matmul_Mish_Mish
    level2/40_Matmul_Scaling_ResidualAdd level2/66_Matmul_Dropout_Mean_Softmax level2/76_Gemm_Add_ReLU)
  # L2-18 last: under the wall clock (protocol paper) it never meets the
  # early stop, so a budget that cuts the list loses the least there.
  local faster=(level1/12_Matmul_with_diagonal_matrices_:level1_12_diag_broadcast
    level1/88_MinGPTNewGelu:level1_88_gelu_tanh_fused level2/14_Gemm_Divide_Sum_Scaling:level2_14_gemm_sum_folded
    level2/40_Matmul_Scaling_ResidualAdd:level2_40_scale_residual_folded
    level2/66_Matmul_Dropout_Mean_Softmax:level2_66_softmax_of_one
    level2/18_Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp:level2_18_linear_sum)
  if [[ "${SMOKE:-0}" == 1 ]]; then
    identity=(level1/12_Matmul_with_diagonal_matrices_)
    faster=("${faster[0]}")
  fi
  mkdir -p "$work/identity"
  : >"$work/jobs.txt"
  for t in "${identity[@]}"; do
    c=$work/identity/$(basename "$t").py
    cp "$kb/$t.py" "$c" && printf '\n\nModelNew = Model\n' >>"$c"
    echo "identity/$(_kb_short "$t") $kb/$t.py $c" >>"$work/jobs.txt"
  done
  for f in "${faster[@]}"; do
    t=${f%%:*}
    echo "faster/$(_kb_short "$t")-${f#*:} $kb/$t.py $repo/tools/gpu/kernelbench_faster/${f#*:}.py" >>"$work/jobs.txt"
  done
  echo "compile/L1-19-relu_inline_cuda $kb/level1/19_ReLU.py $repo/tools/gpu/kernelbench_faster/level1_19_relu_inline_cuda.py" \
    >"$work/jobs_compile.txt"
}

_kb_short() { echo "$1" | sed 's#level\([12]\)/\([0-9]*\)_.*#L\1-\2#'; }

# crucible_for DEBS_DIR PYTHON WORK: sets `crucible` to the binary the loop
# scripts run: built here (unpack_debs, build_crucible in BUILD_DIR,
# build-gpu-loop by default), or with DEBS_DIR "-" the one CRUCIBLE names.
crucible_for() {
  if [[ "$1" != "-" ]]; then
    unpack_debs "$(realpath "$1")"
    local build=${BUILD_DIR:-build-gpu-loop}
    build_crucible "$build" "$2" "$3" || return 1
    crucible=$PWD/$build/bin/crucible
  else
    crucible=$(realpath "${CRUCIBLE:?DEBS_DIR - needs CRUCIBLE}")
  fi
}

# tiny_kernelbench_policy PYTHON DIR: a policy folder without weights (the
# loop initialises it at random): the quick-start's tokenizer, twice its
# width and depth (2.6 M parameters) and 4096 positions, which a KernelBench
# prompt with two previous codes and a whole candidate fits in.
tiny_kernelbench_policy() {
  mkdir -p "$2"
  cp configs/quickstart/policy/tokenizer.json "$2/"
  "$1" - configs/quickstart/policy/config.json "$2/config.json" <<'PYEOF'
import json, sys
c = json.load(open(sys.argv[1]))
c.update(max_position_embeddings=4096, hidden_size=256, intermediate_size=512, num_hidden_layers=4)
json.dump(c, open(sys.argv[2], "w"), indent=1)
PYEOF
}

# sample_gpu_busy DEVICES FILE: appends "UNIX_TIME UTIL..." lines of the
# GPUs in DEVICES (cuda:1,cuda:2) every 0.25 s in the background; sets
# `sampler` to its pid (kill it when done).
sample_gpu_busy() {
  local gpus
  gpus=$(echo "$1" | sed 's/cuda://g')
  (while :; do
    echo "$(date +%s.%N) $(nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -i "$gpus" | paste -sd' ')"
    sleep 0.25
  done) >>"$2" 2>/dev/null &
  sampler=$!
}
