#!/usr/bin/env bash
# The GPU side of the chaos test (issue 20 item 2): an evaluator on cuda:0
# killed in the middle of an evaluation, with SIGKILL and SIGTERM in turn,
# leaves no sandbox worker behind (none of its worker pids alive, none on the
# GPU's compute-process list), and the evaluator started again under the
# same name on the same GPU takes the job that was interrupted (the hub
# re-queues it) and settles it: it is not refused with "GPU 0 is busy with
# another compute process", as issue 20 saw on the H200.
#
# Each round: a hub (with its referee), an evaluator on cuda:0, `crucible
# settle` of KernelBench level 1 problem 12's known-faster rewrite under a
# new id; once a sandbox worker of the evaluator is on the GPU (the
# evaluation is under way) and a random 1 to 4 s more, the evaluator is
# killed; the script checks its workers are gone and restarts it; the
# settle must then finish. Prints a line a round and a summary; exits 1 if
# any round failed.
#
# Usage: tools/gpu/chaos_evaluator.sh CRUCIBLE_BINARY KERNELBENCH_DIR [ROUNDS (6)]
# (CRUCIBLE_BINARY: build/bin/crucible of a GPU build, docs/gpu.md;
# KERNELBENCH_DIR: KernelBench's KernelBench/ folder.) SEED=N repeats a run.
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=${1:?usage: tools/gpu/chaos_evaluator.sh CRUCIBLE_BINARY KERNELBENCH_DIR [ROUNDS]}
kb=${2:?usage: tools/gpu/chaos_evaluator.sh CRUCIBLE_BINARY KERNELBENCH_DIR [ROUNDS]}
rounds=${3:-6}
seed=${SEED:-$RANDOM}
RANDOM=$seed
task=level1/12_Matmul_with_diagonal_matrices_
faster=tools/gpu/kernelbench_faster/level1_12_diag_broadcast.py
work=$(mktemp -d)
address=ipc://$work/hub
echo "chaos_evaluator: seed $seed, $rounds rounds, work folder $work"
printf '[log]\nlevel = "info"\n[hub]\nheartbeat_ms = 200\ndead_after_ms = 5000\nrecovery_grace_ms = 1000\n'\
'[bus]\nheartbeat_ms = 200\ndead_after_ms = 5000\n[referee]\nsecond_device_wait_ms = 1000\n' > "$work/config.toml"
"$bin" hub --config "$work/config.toml" --bind "$address" --ledger "$work/ledger" > "$work/hub.log" 2>&1 &
hub=$!
trap 'kill $hub ${evaluator:-} 2>/dev/null; wait 2>/dev/null' EXIT

start_evaluator() {  # start_evaluator LOG: cuda:0, name gpu0; waits for its registration
  local before
  before=$(grep -c "registered Evaluator 'gpu0'" "$work/hub.log")
  "$bin" evaluator --config "$work/config.toml" --connect "$address" --name gpu0 --device cuda:0 \
    --tasks "$kb" --protocol default >> "$1" 2>&1 &
  evaluator=$!
  for _ in $(seq 600); do
    (($(grep -c "registered Evaluator 'gpu0'" "$work/hub.log") > before)) && return 0
    kill -0 "$evaluator" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}
workers_of() { pgrep -P "$1" -f sandbox_worker.py | tr '\n' ' '; }
on_gpu() {  # on_gpu PID...: those on the GPU's compute-process list
  local apps
  apps=$(nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>/dev/null)
  for p in "$@"; do grep -qx "$p" <<< "$apps" && echo -n "$p "; done
}

failed=0
start_evaluator "$work/evaluator.log" || { echo "the first evaluator did not register"; tail -20 "$work/evaluator.log"; exit 1; }
for round in $(seq "$rounds"); do
  signal=$([ $((round % 2)) = 1 ] && echo KILL || echo TERM)
  "$bin" settle --connect "$address" --task "$task" --candidate "$faster" --id "chaos-$seed-$round" \
    --name "settle-$round" --timeout-s 900 > "$work/settle-$round.json" 2>&1 &
  settle=$!
  # Mid-evaluation: a worker of this evaluator holds the GPU, then 1 to 4 s more.
  for _ in $(seq 1200); do
    w=$(workers_of "$evaluator")
    [ -n "$w" ] && [ -n "$(on_gpu $w)" ] && break
    sleep 0.1
  done
  sleep $((1 + RANDOM % 4))
  workers=$(workers_of "$evaluator")
  t0=$(date +%s.%N)
  kill -s "$signal" "$evaluator"
  wait "$evaluator" 2>/dev/null
  for _ in $(seq 100); do
    left=""
    for p in $workers; do kill -0 "$p" 2>/dev/null && [ "$(ps -o stat= -p "$p")" != Z ] && left+="$p "; done
    [ -z "$left" ] && break
    sleep 0.1
  done
  gpu_left=$(on_gpu $workers)
  start_evaluator "$work/evaluator.log"
  registered=$?
  back=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
  wait "$settle"
  settled=$?
  busy=$(grep -c "is busy with another compute process" "$work/evaluator.log")
  status=$(grep -o '"status": *"[A-Za-z]*"' "$work/settle-$round.json" | head -1)
  ok=yes
  [ -n "$left" ] || [ -n "$gpu_left" ] || [ "$registered" != 0 ] || [ "$settled" != 0 ] || [ "$busy" != 0 ] && ok=no
  [ $ok = no ] && failed=$((failed + 1))
  printf 'round %d: SIG%s mid-evaluation, workers [%s] -> alive after [%s] on the GPU [%s]; restarted on cuda:0 %s in %.1f s; the interrupted candidate settled: %s %s; ok %s\n' \
    "$round" "$signal" "${workers% }" "${left% }" "${gpu_left% }" "$([ $registered = 0 ] && echo registered || echo 'NOT registered')" \
    "$back" "$([ $settled = 0 ] && echo yes || echo no)" "$status" "$ok"
done
echo "chaos_evaluator: $rounds rounds, $failed failed (seed $seed; logs in $work)"
((failed == 0))
