#!/usr/bin/env bash
# Layer 7 (secondary-device verification) end to end on two GPUs: a hub with
# its referee and two evaluators (cuda:0 and cuda:1, quick protocol), then
# `crucible settle` for KernelBench level 1 problem 12's known-faster rewrite
# (diag(A) @ B -> A[:, None] * B, far above the 3x verification threshold)
# and its identity candidate; then the same rewrite again under a hub whose
# referee has the documented fault injection [referee] inject_verify_scale =
# 2.0, which must void it. With one GPU (DEVICES="cuda:0 cuda:0") both
# evaluators take turns on it. Prints each settlement as JSON and the
# referee's log lines. Usage:
#   tools/gpu/referee_verify.sh CRUCIBLE_BINARY KERNELBENCH_DIR
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=${1:?usage: tools/gpu/referee_verify.sh CRUCIBLE_BINARY KERNELBENCH_DIR}
kb=${2:?usage: tools/gpu/referee_verify.sh CRUCIBLE_BINARY KERNELBENCH_DIR}
read -r -a devices <<< "${DEVICES:-cuda:0 cuda:1}"
task=level1/12_Matmul_with_diagonal_matrices_
faster=tools/gpu/kernelbench_faster/level1_12_diag_broadcast.py
work=$(mktemp -d)
echo "work: $work"
cp "$kb/$task.py" "$work/identity.py" && printf '\nModelNew = Model\n' >> "$work/identity.py"
port=${PORT:-26555}
address=tcp://127.0.0.1:$port
pids=()

start() {  # start RUN_NAME EXTRA_REFEREE_TOML
  local dir=$work/$1
  mkdir -p "$dir"
  printf '[log]\nlevel = "info"\n[hub]\nheartbeat_ms = 200\ndead_after_ms = 5000\n[bus]\nheartbeat_ms = 200\n'\
'dead_after_ms = 5000\n[referee]\nsecond_device_wait_ms = 120000\n%s\n' "$2" > "$dir/config.toml"
  "$bin" hub --config "$dir/config.toml" --bind "$address" --ledger "$dir/ledger" > "$dir/hub.log" 2>&1 &
  pids+=($!)
  sleep 1
  local i=0
  for d in "${devices[@]}"; do
    "$bin" evaluator --config "$dir/config.toml" --connect "$address" --name "gpu$i-${d/:/}" --device "$d" \
      --tasks "$kb" --protocol quick > "$dir/evaluator$i.log" 2>&1 &
    pids+=($!)
    i=$((i + 1))
  done
  for _ in $(seq 100); do
    (( $(grep -c "registered Evaluator" "$dir/hub.log") >= ${#devices[@]} )) && break
    sleep 0.2
  done
}
stop() {
  kill "${pids[@]}" 2>/dev/null
  wait "${pids[@]}" 2>/dev/null
  pids=()
}
settle() {  # settle RUN_NAME ID CANDIDATE
  echo "== $2"
  "$bin" settle --connect "$address" --task "$task" --candidate "$3" --id "$2" --timeout-s 400 2>&1
}

echo "# run 1: two evaluators (${devices[*]}), default thresholds"
start run1 ""
settle run1 diag-faster "$faster"
settle run1 diag-identity "$work/identity.py"
stop
grep -h "referee settled\|ok reward=\|verify" "$work"/run1/*.log | cut -c1-260
echo
echo "# run 2: the same with [referee] inject_verify_scale = 2.0 (fault injection)"
start run2 "inject_verify_scale = 2.0"
settle run2 diag-faster-injected "$faster"
stop
grep -h "referee settled\|ok reward=" "$work"/run2/*.log | cut -c1-260
