#!/usr/bin/env bash
# A first look at the evaluator's CUDA path on a GPU machine: identity
# candidates (ModelNew = Model) on a few KernelBench v0 tasks and one
# known-faster rewrite (level 1 problem 12, diag(A) @ B -> A[:, None] * B),
# each measured with `crucible-eval --device cuda:0 --json`. Prints one line
# per evaluation. Usage: tools/gpu/eval_smoke.sh KERNELBENCH_DIR EVAL_BINARY [PROTOCOL]
set -uo pipefail
kb=$1
bin=$2
protocol=${3:-default}
work=$(mktemp -d)
tasks=(level1/12_Matmul_with_diagonal_matrices_.py level1/19_ReLU.py level1/23_Softmax.py level2/12_Gemm_Multiply_LeakyReLU.py)
run() {  # run NAME TASK CANDIDATE
  local out
  out=$("$bin" eval --task "$2" --candidate "$3" --device cuda:0 --protocol "$protocol" --json 2>"$work/err")
  python3 - "$1" "$out" "$work/err" <<'PY'
import json, sys
name, out, err = sys.argv[1], sys.argv[2], sys.argv[3]
try:
    j = json.loads(out.strip().splitlines()[-1])
    print(f"{name:<48} {j['status']:<14} reward {j['reward']:.2f} raw {j['speedup_raw']:.4f} "
          f"var {j['bucket_variance']:.2e} rounds {j['rounds']} ref {j['ref_us']:.1f}us cand {j['cand_us']:.1f}us "
          f"{j['duration_s']:.1f}s  {j['reason'][:80]}")
except Exception as e:
    print(f"{name:<48} no result ({e}): {open(err).read()[-300:]}")
PY
}
for t in "${tasks[@]}"; do
  [[ -f "$kb/$t" ]] || { echo "missing $kb/$t"; continue; }
  cp "$kb/$t" "$work/identity.py"
  printf '\nModelNew = Model\n' >> "$work/identity.py"
  for i in 1 2; do run "identity $t #$i" "$kb/$t" "$work/identity.py"; done
done
t=level1/12_Matmul_with_diagonal_matrices_.py
sed 's/return torch.diag(A) @ B/return A.unsqueeze(1) * B/; s/class Model(/class ModelNew(/; s/super(Model, self)/super(ModelNew, self)/' \
  "$kb/$t" > "$work/faster.py"
for i in 1 2; do run "diag rewrite $t #$i" "$kb/$t" "$work/faster.py"; done
