#!/usr/bin/env bash
# The hack catalogue on a GPU: every line of tests/hacks/manifest.txt (the
# CPU cases too: they must be caught on CUDA as well) and, for false
# positives, the legitimate variants (faster, equal, slower) of the project's
# task set, each through `crucible-eval --device cuda:0 --protocol quick
# --json`. Prints one table row per evaluation and a PASS/FAIL count.
# Self-contained: needs only the crucible-eval binary (built on the CPU
# machine, carried over as docs/gpu.md step 4 says) and this checkout.
# Usage: tools/gpu/hacks_gpu.sh EVAL_BINARY [DEVICE]
# Environment: CORES (the worker's cores, default crucible eval's: the last
# core); QUEUE, a directory shared by several runs of this script on
# different GPUs: each case goes to the first run that claims it (mkdir),
# and none is claimed once QUEUE/stop exists; ONLY, an extended regular
# expression: only candidates whose path matches. The CUDA cases come first.
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=${1:?usage: tools/gpu/hacks_gpu.sh EVAL_BINARY [DEVICE]}
device=${2:-cuda:0}
work=$(mktemp -d)
pass=0
fail=0
n=0
claim() {  # claim: true when this run evaluates the next case
  n=$((n + 1))
  [[ -z "${QUEUE:-}" ]] && return 0
  [[ ! -e "$QUEUE/stop" ]] && mkdir "$QUEUE/$n" 2>/dev/null
}
row() {  # row CANDIDATE TASK EXPECTED_STATUS EXPECTED_DEFENCES(|-separated, or "-" for none)
  local out
  [[ -n "${ONLY:-}" && ! "$1" =~ $ONLY ]] && return 0
  claim || return 0
  out=$("$bin" eval --task "$2" --candidate "$1" --device "$device" --protocol quick --seed 11 --json \
        ${CORES:+--cores "$CORES"} 2>"$work/err")
  if python3 - "$1" "$3" "$4" "$out" "$work/err" <<'PY'; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
import json, sys
cand, status, defences, out, err = sys.argv[1:6]
try:
    j = json.loads(out.strip().splitlines()[-1])
except Exception as e:  # no JSON: the evaluator itself failed
    print(f"FAIL {cand:<52} no result ({e}): {open(err).read()[-200:]}")
    sys.exit(1)
fired = j["defences_fired"]
if status == "ok":
    ok = j["status"] == "ok"
elif status.startswith("ok<="):  # made pointless, not rejected: ok, and no more than its honest work earns
    ok = j["status"] == "ok" and j["reward"] <= float(status[4:])
else:
    ok = j["status"] == status and any(d in fired for d in defences.split("|")) and j["reward"] == 0
print(f"{'PASS' if ok else 'FAIL'} {cand:<52} expected {status:<13} got {j['status']:<13} reward {j['reward']:<5.2f} "
      f"defences {','.join(fired) or '-':<34} {j['duration_s']:5.1f}s  {'' if ok else j['reason'][-160:]}")
sys.exit(0 if ok else 1)
PY
}
echo "== hack catalogue on $device"
while read -r cand task status defences; do
  [[ -z "$cand" || "$cand" == \#* ]] && continue
  row "$cand" "$task" "$status" "$defences"
done < <(grep '^tests/hacks/cuda/' tests/hacks/manifest.txt; grep -v '^tests/hacks/cuda/' tests/hacks/manifest.txt)
echo "== legitimate variants on $device (must settle ok: no false positives)"
for task in configs/tasks/cpu/*/task.py; do
  for v in faster equal slower; do
    [[ -f "$(dirname "$task")/$v.py" ]] && row "$(dirname "$task")/$v.py" "$task" ok -
  done
done
echo "== $pass passed, $fail failed"
rm -rf "$work"
[[ $fail -eq 0 ]]
