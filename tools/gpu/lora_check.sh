#!/usr/bin/env bash
# LoRA against transformers and PEFT (issue 21 item 1; docs/gpu.md): builds
# crucible-policy in build-gpu/ against torch's LibTorch, as policy_gpu.sh
# does, then runs tools/gpu/lora_check.py (PEFT folder and merged checkpoint
# loaded by transformers, crucible's adapted forward against PEFT's).
#
# Usage: tools/gpu/lora_check.sh DEBIAN_PREFIX [WORK_DIR]
# Environment: PYTHON (default python3) must import torch, transformers and
# safetensors (peft when installed); JOBS for the build; RANK, ALPHA, TARGETS.
set -euo pipefail
if (($# < 1)); then
  sed -n '2,9p' "$0"
  exit 2
fi
prefix=$(realpath "$1")
work=$(realpath -m "${2:-/tmp/crucible-lora-check}")
cd "$(dirname "$0")/../.."
py=${PYTHON:-python3}
arch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
mkdir -p "$work"
"$py" -c 'import torch, transformers, safetensors; print("torch", torch.__version__, "transformers", transformers.__version__, "cuda", torch.cuda.is_available())'
"$py" -c 'import peft; print("peft", peft.__version__)' || echo "no peft package: the LoRA arithmetic is done by hand"

export PATH="$prefix/usr/bin:$PATH"
export PKG_CONFIG_SYSROOT_DIR="$prefix"
export PKG_CONFIG_LIBDIR="$prefix/usr/lib/$arch/pkgconfig:$prefix/usr/share/pkgconfig:$prefix/usr/lib/pkgconfig"
export LD_LIBRARY_PATH="$prefix/usr/lib/$arch:$prefix/usr/lib:${LD_LIBRARY_PATH:-}"
torch_cmake=$("$py" -c 'import torch; print(torch.utils.cmake_prefix_path)')
torch_lib=$("$py" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH="$torch_lib:$LD_LIBRARY_PATH"

echo "=== build (build-gpu/: crucible-policy)"
if [[ ! -f build-gpu/build.ninja ]]; then
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCRUCIBLE_ACTORS=policy -DCRUCIBLE_TESTS=ON \
    -DCMAKE_PREFIX_PATH="$torch_cmake;$prefix/usr;$prefix/usr/lib/$arch/cmake" \
    -DCMAKE_INCLUDE_PATH="$prefix/usr/include" -DCMAKE_LIBRARY_PATH="$prefix/usr/lib/$arch" \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DTORCH_CUDA_ARCH_LIST=9.0 >"$work/cmake.log" || { tail -50 "$work/cmake.log"; exit 1; }
fi
cmake --build build-gpu -j"${JOBS:-$(nproc)}" --target crucible-policy

"$py" tools/gpu/lora_check.py --crucible-policy build-gpu/bin/crucible-policy --work "$work/lora" \
  --rank "${RANK:-8}" --alpha "${ALPHA:-16}" \
  --targets "${TARGETS:-q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj}"
