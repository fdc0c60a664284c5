#!/usr/bin/env bash
# Builds crucible's policy on a GPU machine against PyTorch's LibTorch and
# runs, in order (each step prints a line starting with "==="):
#   1. the golden data, regenerated into tests/data/policy (commit it after);
#   2. the policy tests (CPU fp32 goldens; CUDA fp32/bf16 when a GPU is there);
#   3. the round trip: crucible loads and saves each golden model, transformers
#      loads what crucible wrote and must give the golden logits (1e-4) and
#      byte-identical tensors;
#   4. the generation benchmark of issue 6: a random Qwen2.5-0.5B-shaped model,
#      512 prompt + 512 new tokens, batch 1/8/64, crucible vs transformers'
#      generate(), printed as one table (also saved as JSON lines).
#
# Usage: tools/gpu/policy_gpu.sh DEBIAN_PREFIX [WORK_DIR]
#   DEBIAN_PREFIX  a folder where Debian 12's packages for crucible's
#                  dependencies are unpacked (DEBIAN_PREFIX/usr/include, ...),
#                  e.g. with `dpkg -x pkg.deb DEBIAN_PREFIX` for each of
#                  tools/setup.sh's packages except libtorch.
#   WORK_DIR       scratch space (default /tmp/crucible-policy-gpu); the bench
#                  model (1 GB) is made there once.
# Environment: PYTHON (default python3) must import torch, transformers,
# tokenizers and safetensors; JOBS (default nproc) for the build.
#   SKIP_GOLDEN=1     keep the committed golden data (skip step 1)
#   SKIP_ROUNDTRIP=1  skip step 3
#   HF_BENCH=0        benchmark crucible only (skip transformers in step 4;
#                     the copy bandwidth is still measured)
#   EAGER_BENCH=1     also benchmark crucible without CUDA graphs
#   FUSED_BENCH=0     skip crucible with the fused decode kernels in step 4
#   WAIT_FOR=FILE     build, then wait until FILE exists before using the GPU
#   SHAPE=7b          the bench model's shape in step 4 (make_policy_golden.py's
#                     BENCH_SHAPES: 0.5b, the default, 3b, 7b, 14b, 32b)
#   BENCH_ONLY=1      build crucible-policy and run only step 4
#   TEST_CASES=PAT    step 2 runs only policy_model_test's cases matching PAT
#   BATCHES=1,8       step 4's batch sizes (default 1,8,64)
#   CONTINUOUS_ONLY=1 build crucible-policy and run only the continuous
#                     batching benchmark: 256 sampled prompts (512 tokens),
#                     completions ending at an eos set of mean 128 tokens (cap
#                     512), on 16 and 64 slots against static batches of 16
#                     and 64 (bench-generate --prompts)
# A crashing test prints a backtrace (test_crash_backtrace.cpp), demangled here.
set -euo pipefail
if (($# < 1)); then
  sed -n '2,23p' "$0"
  exit 2
fi
prefix=$(realpath "$1")
work=$(realpath -m "${2:-/tmp/crucible-policy-gpu}")
cd "$(dirname "$0")/../.."
repo=$PWD
py=${PYTHON:-python3}
arch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
mkdir -p "$work"

torch_cmake=$("$py" -c 'import torch; print(torch.utils.cmake_prefix_path)')
"$py" -c 'import torch, transformers, tokenizers, safetensors; print("torch", torch.__version__, "transformers", transformers.__version__, "cuda", torch.cuda.is_available())'

# Debian's libraries and tools from the unpacked prefix. pkg-config's .pc files
# say prefix=/usr, so a sysroot makes their -I/-L point into the prefix.
export PATH="$prefix/usr/bin:$PATH"
export PKG_CONFIG_SYSROOT_DIR="$prefix"
export PKG_CONFIG_LIBDIR="$prefix/usr/lib/$arch/pkgconfig:$prefix/usr/share/pkgconfig:$prefix/usr/lib/pkgconfig"
export LD_LIBRARY_PATH="$prefix/usr/lib/$arch:$prefix/usr/lib:${LD_LIBRARY_PATH:-}"
torch_lib=$("$py" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH="$torch_lib:$LD_LIBRARY_PATH"

echo "=== build (build-gpu/)"
cmake -S . -B build-gpu -G Ninja \
  -DCMAKE_BUILD_TYPE=Release \
  -DCRUCIBLE_ACTORS=policy \
  -DCRUCIBLE_TESTS=ON \
  -DCRUCIBLE_REQUIRE_POLICY_GOLDEN=ON \
  -DCMAKE_PREFIX_PATH="$torch_cmake;$prefix/usr;$prefix/usr/lib/$arch/cmake" \
  -DCMAKE_INCLUDE_PATH="$prefix/usr/include" \
  -DCMAKE_LIBRARY_PATH="$prefix/usr/lib/$arch" \
  -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DTORCH_CUDA_ARCH_LIST=9.0 >"$work/cmake.log" || { tail -50 "$work/cmake.log"; exit 1; }
# WAIT_FOR: the build overlaps another script's measurement in the same
# call; the GPU is touched only once that script has created this file.
wait_for_gpu() {
  [[ -z "${WAIT_FOR:-}" ]] && return
  echo "=== waiting for $WAIT_FOR before using the GPU"
  while [[ ! -e "$WAIT_FOR" ]]; do sleep 1; done
}
shape=${SHAPE:-0.5b}
bench_model="$work/bench_model"
[[ $shape != 0.5b ]] && bench_model+="-$shape"
if [[ "${CONTINUOUS_ONLY:-0}" == 1 ]]; then
  cmake --build build-gpu -j"${JOBS:-$(nproc)}" --target crucible-policy
  wait_for_gpu
  echo "=== continuous batching against static batches (Qwen2.5-0.5B shape, bf16)"
  "$py" tools/gpu/make_policy_golden.py --bench "$bench_model" --bench-shape "$shape" --bench-model-only
  build-gpu/bin/crucible-policy bench-generate --model "$bench_model" --device cuda --batch 16,64 \
    --prompt-tokens 512 --new-tokens 512 --prompts 256 --mean-tokens 128 | tee "$work/continuous.jsonl"
  [[ -n "${OUT:-}" ]] && cp "$work/continuous.jsonl" "$OUT/"
  exit 0
fi
if [[ "${BENCH_ONLY:-0}" == 1 ]]; then
  cmake --build build-gpu -j"${JOBS:-$(nproc)}" --target crucible-policy
  wait_for_gpu
else
cmake --build build-gpu -j"${JOBS:-$(nproc)}" --target crucible-policy policy_model_test policy_golden_test policy_io_test
wait_for_gpu

echo "=== 1. golden data (tests/data/policy)"
if [[ "${SKIP_GOLDEN:-0}" == 1 ]]; then
  echo "skipped (SKIP_GOLDEN=1): the committed golden data"
else
  "$py" tools/gpu/make_policy_golden.py --out tests/data/policy
fi

echo "=== 2. policy tests"
# A failing test is reported and the later steps still run (one call of a
# lent machine should bring back every figure it can).
demangle() { if command -v c++filt >/dev/null; then c++filt; else cat; fi; }
# TEST_CASES=PATTERN: only policy_model_test's cases matching it (doctest's
# --test-case wildcards), without the io and golden tests.
tests=(policy_io_test policy_golden_test)
[[ -n "${TEST_CASES:-}" ]] && tests=()
for t in "${tests[@]}"; do
  set +e
  build-gpu/bin/$t 2>&1 | demangle
  code=${PIPESTATUS[0]}
  set -e
  ((code == 0)) || echo "FAILED: $t (exit $code)"
done
# The LibTorch tests one process per test case, so that a crash in one does
# not skip the others.
mapfile -t cases < <(build-gpu/bin/policy_model_test --list-test-cases --no-version \
  ${TEST_CASES:+--test-case="$TEST_CASES"} 2>/dev/null | grep -v '^\[doctest\]\|^=*$')
for c in "${cases[@]}"; do
  set +e
  build-gpu/bin/policy_model_test --test-case="$(printf '%s' "$c" | sed 's/[][*?,\\]/?/g')" 2>&1 | demangle |
    grep -v '^\[doctest\] \(doctest version\|run with\)'
  code=${PIPESTATUS[0]}
  set -e
  ((code == 0)) || echo "FAILED: policy_model_test: $c (exit $code)"
done

echo "=== 3. round trip: crucible saves, transformers loads"
if [[ "${SKIP_ROUNDTRIP:-0}" == 1 ]]; then
  echo "skipped (SKIP_ROUNDTRIP=1)"
else
rm -rf "$work/roundtrip"
for m in qwen2_tiny_sharded llama_tiny_tied; do
  build-gpu/bin/crucible-policy save --model "tests/data/policy/$m" --out "$work/roundtrip/$m"
done
"$py" tools/gpu/make_policy_golden.py --out tests/data/policy --roundtrip "$work/roundtrip"
for m in qwen2_tiny_sharded llama_tiny_tied; do
  ids=$("$py" -c "import json,sys; print(','.join(map(str, json.load(open(sys.argv[1]))['greedy'][0]['prompt_ids'])))" \
    "tests/data/policy/$m/golden.json")
  echo "$m on cuda in bf16 (greedy, 16 tokens):"
  build-gpu/bin/crucible-policy generate --model "tests/data/policy/$m" --prompt-ids "$ids" \
    --max-new-tokens 16 --greedy --device cuda --json
done
fi

fi  # BENCH_ONLY

batches=${BATCHES:-1,8,64}
echo "=== 4. generation benchmark ($shape shape, bf16, 512 + 512 tokens, batch $batches)"
bench="$work/bench-$shape.jsonl"
"$py" tools/gpu/make_policy_golden.py --bench "$bench_model" --bench-shape "$shape" --bench-model-only
build-gpu/bin/crucible-policy bench-generate --model "$bench_model" --device cuda --batch "$batches" \
  --prompt-tokens 512 --new-tokens 512 --fused-kernels false | tee "$bench"
# The same with the fused decode kernels (decode_kernels.hpp; generation's
# default) instead of LibTorch's ops: what the kernels are worth.
if [[ "${FUSED_BENCH:-1}" != 0 ]]; then
  build-gpu/bin/crucible-policy bench-generate --model "$bench_model" --device cuda --batch "$batches" \
    --prompt-tokens 512 --new-tokens 512 --fused-kernels true | tee -a "$bench"
fi
if [[ "${EAGER_BENCH:-0}" == 1 ]]; then
  build-gpu/bin/crucible-policy bench-generate --model "$bench_model" --device cuda --batch "$batches" \
    --prompt-tokens 512 --new-tokens 512 --cuda-graphs false | tee -a "$bench"
fi
# transformers (HF_BENCH=0: only the copy bandwidth, for the floor column).
hf_batches=$batches
[[ "${HF_BENCH:-1}" == 0 ]] && hf_batches=
"$py" tools/gpu/make_policy_golden.py --bench "$bench_model" --bench-shape "$shape" --batches "$hf_batches" |
  tee -a "$bench"
echo
"$py" tools/gpu/make_policy_golden.py --bench-table "$bench" --bench-shape "$shape"
[[ -n "${OUT:-}" ]] && cp "$bench" "$OUT/"
echo "(JSON lines in $bench; golden data regenerated under $repo/tests/data/policy)"
