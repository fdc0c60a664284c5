#!/usr/bin/env bash
# Builds crucible's learner on a GPU machine against PyTorch's LibTorch (with
# NCCL) and runs, in order (each step prints a line starting with "==="):
#   1. the golden values of the objectives made with PyTorch on this GPU
#      (tests/data/learner/objectives_golden_h200.json: commit it after);
#   2. learner_test's golden cases (CPU and CUDA), data-parallel cases
#      (2 Gloo ranks on the CPU; 2 NCCL ranks on two GPUs vs 1 GPU) and
#      activation checkpointing's (CPU, and LoRA steps under CUDA autocast);
#   3. the GRPO step benchmark of issue 7: crucible's trainer against the same
#      step in PyTorch eager Python (tools/gpu/learner_bench.py) on one GPU, a
#      random Qwen2-0.5B-shaped model (tools/gpu/make_policy_golden.py's);
#   4. issue 9's data-parallel scaling: the same step as 2 and 4 NCCL ranks,
#      one GPU each, the per-GPU batch fixed (as many as the machine has);
#   5. publication of the weights to a rollout's loader on the same node
#      (with LORA_RANK, of the adapters alone beside the full weights);
#   6. with FIT_SHAPES, the largest shape whose GRPO step fits one GPU: for
#      each shape, one step of crucible's trainer with full weights and with
#      LoRA (rank LORA_RANK or 16), activation checkpointing on;
#   then one table (the JSON lines are kept in WORK_DIR/learner_bench.jsonl,
#   and copied under $OUT when set).
#
# Usage: tools/gpu/learner_gpu.sh DEBIAN_PREFIX [WORK_DIR]
#   DEBIAN_PREFIX  where Debian 12's packages are unpacked (docs/gpu.md; "/"
#                  once they are copied into /usr)
#   WORK_DIR       scratch space (default /tmp/crucible-learner-gpu)
# Environment: PYTHON (default python3) must import torch and transformers;
# JOBS (default half the cores) and BUILD_DIR (default build-gpu-learner) for
# the build; STEPS (default 5) timed GRPO
# steps; SKIP_TESTS=1, SKIP_BENCH=1, SKIP_DP=1, SKIP_PUBLISH=1 skip steps;
# WAIT_FOR=FILE builds, then waits until FILE exists before using the GPU;
# PUBLISH_REPEAT versions of the full weights in step 5 (3 at 0.5b, else 1).
# SHAPE (default 0.5b; 3b, 7b, 14b, 32b: make_policy_golden.py's BENCH_SHAPES)
# is the bench model's shape; LORA_RANK (default 0) runs steps 3 and 5 with
# LoRA adapters of that rank on every projection, the peer through PEFT (or
# PEFT's arithmetic by hand where peft is not installed);
# ACTIVATION_CHECKPOINTING=1 recomputes each layer in the backward, both
# sides; FIT_SHAPES="3b 7b 14b" runs step 6 (each model is made, tried and
# removed; about 2 bytes a parameter of disk while it lasts).
set -uo pipefail
if (($# < 1)); then
  sed -n '2,/^set -uo/p' "$0" | grep '^#'
  exit 2
fi
prefix=$(realpath "$1")
work=$(realpath -m "${2:-/tmp/crucible-learner-gpu}")
cd "$(dirname "$0")/../.."
py=${PYTHON:-python3}
arch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
mkdir -p "$work"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
jobs=${JOBS:-$(($(nproc) / 2))}
steps=${STEPS:-5}
gpus=$("$py" -c 'import torch; print(torch.cuda.device_count())')
torch_cmake=$("$py" -c 'import torch; print(torch.utils.cmake_prefix_path)')
"$py" -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__, "gpus", torch.cuda.device_count())'
nccl_include=$("$py" - <<'EOF'
import glob, os, site
for sp in site.getsitepackages():
    for h in glob.glob(os.path.join(sp, "nvidia", "**", "nccl.h"), recursive=True):
        print(os.path.dirname(h))
        raise SystemExit
EOF
)
echo "nccl.h in: ${nccl_include:-(none)}"

export PATH="$prefix/usr/bin:$PATH"
export PKG_CONFIG_SYSROOT_DIR="$prefix"
export PKG_CONFIG_LIBDIR="$prefix/usr/lib/$arch/pkgconfig:$prefix/usr/share/pkgconfig:$prefix/usr/lib/pkgconfig"
export LD_LIBRARY_PATH="$prefix/usr/lib/$arch:$prefix/usr/lib:${LD_LIBRARY_PATH:-}"
torch_lib=$("$py" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH="$torch_lib:$LD_LIBRARY_PATH"

build=${BUILD_DIR:-build-gpu-learner}
targets=(learner_test learner_dp_probe learner_resume_probe learner_bench)
configure() {
  cmake -S . -B $build -G Ninja \
    -DCMAKE_BUILD_TYPE=Release \
    -DCRUCIBLE_ACTORS="policy;learner" \
    -DCRUCIBLE_TESTS=ON \
    -DCMAKE_PREFIX_PATH="$torch_cmake;$prefix/usr;$prefix/usr/lib/$arch/cmake" \
    -DCMAKE_INCLUDE_PATH="$prefix/usr/include" \
    -DCMAKE_LIBRARY_PATH="$prefix/usr/lib/$arch" \
    -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DTORCH_CUDA_ARCH_LIST=9.0 \
    -DNCCL_INCLUDE_DIR="$nccl_include" "$@" >"$work/cmake.log" 2>&1 || { tail -40 "$work/cmake.log"; return 1; }
  grep -i "nccl" "$work/cmake.log" || true
}
echo "=== build ($build, -j$jobs)"
start=$SECONDS
configure -DCRUCIBLE_WITH_NCCL=AUTO || exit 1
if ! cmake --build $build -j"$jobs" --target "${targets[@]}" 2>&1 | tail -60; then
  echo "BUILD FAILED with NCCL; building without it"
  configure -DCRUCIBLE_WITH_NCCL=OFF || exit 1
  cmake --build $build -j"$jobs" --target "${targets[@]}" 2>&1 | tail -30 || exit 1
fi
[[ -x $build/bin/learner_bench ]] || { echo "BUILD FAILED"; exit 1; }
echo "built in $((SECONDS - start)) s"
# WAIT_FOR: the build overlaps another script's measurement in the same
# call; the GPU is touched only once that script has created this file.
if [[ -n "${WAIT_FOR:-}" ]]; then
  echo "=== waiting for $WAIT_FOR before using the GPU"
  while [[ ! -e "$WAIT_FOR" ]]; do sleep 1; done
fi

echo "=== 1. golden values on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
"$py" tools/gpu/make_learner_golden.py --device cuda --out tests/data/learner/objectives_golden_h200.json
[[ -n "${OUT:-}" ]] && cp tests/data/learner/objectives_golden_h200.json "$OUT/"

if [[ "${SKIP_TESTS:-0}" != 1 ]]; then
  echo "=== 2. learner_test: golden values (CPU and CUDA), data parallel (Gloo on CPU, NCCL on 2 GPUs), checkpointing"
  $build/bin/learner_test --test-case='*golden*,*ranks*,*checkpointing*' --no-version 2>&1 | tail -40 ||
    echo "FAILED: learner_test"
fi

bench="$work/learner_bench.jsonl"
: >"$bench"
shape=${SHAPE:-0.5b}
model="$work/bench_model-$shape"
variant=()
[[ "${LORA_RANK:-0}" != 0 ]] && variant+=(--lora-rank "$LORA_RANK")
[[ "${ACTIVATION_CHECKPOINTING:-0}" == 1 ]] && variant+=(--activation-checkpointing)
if [[ "${SKIP_BENCH:-0}" != 1 || "${SKIP_DP:-0}" != 1 || "${SKIP_PUBLISH:-0}" != 1 ]]; then
  "$py" tools/gpu/make_policy_golden.py --bench "$model" --bench-shape "$shape" --bench-model-only >/dev/null
fi
if [[ "${SKIP_BENCH:-0}" != 1 ]]; then
  echo "=== 3. GRPO step, $shape ${variant[*]}: crucible vs PyTorch eager, one GPU ($steps timed steps after 2)"
  CUDA_VISIBLE_DEVICES=0 $build/bin/learner_bench grpo --model "$model" --steps "$steps" "${variant[@]}" |
    tee -a "$bench" || echo "FAILED: learner_bench grpo"
  CUDA_VISIBLE_DEVICES=0 PYTHONUNBUFFERED=1 "$py" tools/gpu/learner_bench.py grpo --model "$model" --steps "$steps" \
    "${variant[@]}" | tee -a "$bench" || echo "FAILED: learner_bench.py grpo"
fi
if [[ "${SKIP_DP:-0}" != 1 ]]; then
  echo "=== 4. data parallel over NCCL: 8 groups x 4 samples per GPU ($gpus GPUs here)"
  for world in 2 4 8; do
    if ((world > gpus)); then
      echo "world $world: not run ($gpus GPUs here)"
      continue
    fi
    store="$work/store-$world"
    rm -f "$store"
    pids=()
    for ((r = 0; r < world; r++)); do
      CUDA_VISIBLE_DEVICES=$r $build/bin/learner_bench grpo --model "$model" --steps "$steps" \
        --groups $((8 * world)) --nccl "$r" "$world" "$store" >>"$bench" 2>"$work/rank$r.err" &
      pids+=($!)
    done
    ok=1
    for p in "${pids[@]}"; do wait "$p" || ok=0; done
    ((ok)) || { echo "FAILED: world $world"; tail -5 "$work"/rank*.err; }
    tail -1 "$bench"
  done
fi
if [[ "${SKIP_PUBLISH:-0}" != 1 ]]; then
  echo "=== 5. publication to a rollout on the same node"
  # The adapters first (megabytes), then the full weights: every version of
  # those is a whole checkpoint on disk (15 GB at 7B), so past 0.5B one
  # version, not three (a 64 GB disk filled at 7B's second version, twice).
  if [[ "${LORA_RANK:-0}" != 0 ]]; then
    rm -rf "$work/publish"
    CUDA_VISIBLE_DEVICES=0 $build/bin/learner_bench publish --model "$model" --work "$work/publish" --repeat 3 \
      --lora-rank "$LORA_RANK" | tee -a "$bench" || echo "FAILED: learner_bench publish --lora-rank"
  fi
  rm -rf "$work/publish"
  repeat=${PUBLISH_REPEAT:-$([[ $shape == 0.5b ]] && echo 3 || echo 1)}
  CUDA_VISIBLE_DEVICES=0 $build/bin/learner_bench publish --model "$model" --work "$work/publish" --repeat "$repeat" |
    tee -a "$bench" || echo "FAILED: learner_bench publish"
  rm -rf "$work/publish"
fi
if [[ -n "${FIT_SHAPES:-}" ]]; then
  echo "=== 6. the largest shape whose GRPO step fits one GPU (one step, activation checkpointing on)"
  for s in $FIT_SHAPES; do
    m="$work/fit-$s"
    "$py" tools/gpu/make_policy_golden.py --bench "$m" --bench-shape "$s" --bench-model-only >/dev/null ||
      { echo "fit $s: cannot make the model"; continue; }
    for lora in 0 "${LORA_RANK:-16}"; do
      [[ $lora == 0 ]] && what="full weights" || what="LoRA rank $lora"
      if CUDA_VISIBLE_DEVICES=0 $build/bin/learner_bench grpo --model "$m" --steps 1 --warmup 0 --lora-rank "$lora" \
        --activation-checkpointing >>"$bench" 2>"$work/fit.err"; then
        echo "fit $s, $what: fits ($(tail -1 "$bench" | "$py" -c 'import json,sys; print("%.1f GiB" % json.load(sys.stdin)["device_memory_used_gib"])'))"
      else
        echo "fit $s, $what: does not fit: $(grep -i -m1 "out of memory\|error" "$work/fit.err" | cut -c1-200)"
      fi
    done
    rm -rf "$m"
  done
fi
echo
"$py" tools/gpu/learner_bench.py table "$bench"
[[ -n "${OUT:-}" ]] && cp "$bench" "$OUT/"
echo "(JSON lines in $bench; golden values in tests/data/learner/objectives_golden_h200.json)"
