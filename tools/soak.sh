#!/usr/bin/env bash
# A soak (issue 20 item 6): the quick-start's loop with every role as its own
# `crucible` process on ipc (hub, referee, CPU evaluator with its sandbox
# workers, exemplar store, static detector, learner, two rollouts that never
# stop) for DURATION seconds, every process's RSS (VmRSS and RssAnon) and
# open descriptors sampled, and each RocksDB store's write-ahead log; then a
# report (tools/soak_report.py): per role the figures at the end of the
# warm-up and at the end, the least-squares slopes after the warm-up, and
# the error lines of every log. Exits 1 when a slope passes its bound, a log
# holds an error line or a role exited on its own (docs/operations.md,
# "Soak").
#
# Usage: tools/soak.sh [DURATION_S] [RUN_DIR]
#   DURATION_S    default 3600; warm-up: the first sixth, at most 600 s
#   RUN_DIR       default /tmp/soak-TIMESTAMP (logs, samples.csv, stores.csv,
#                 report.txt, summary.json)
# Environment:
#   SOAK_POLICY   a stage-1 policy folder to start from; without it the
#                 script runs the quick-start's stage 1 (SFT) first, into
#                 RUN_DIR/stage1 (about 2 minutes on 2 idle cores)
#   SOAK_INTERVAL seconds between samples (5)
#   SOAK_MAX_RSS_SLOPE, SOAK_MAX_FD_SLOPE  bounds in KiB/min and fds/min
#                 (defaults in tools/soak_report.py)
# The soak measures no speed: run it under `nice -n 19` beside other work.
set -euo pipefail
cd "$(dirname "$0")/.."
source_dir=$PWD
duration=${1:-3600}
dir=${2:-/tmp/soak-$(date -u +%Y%m%dT%H%M%S)}
interval=${SOAK_INTERVAL:-5}
bin=$source_dir/build/bin
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
[[ -e "$dir/hub-ledger" ]] && { echo "soak: $dir holds a run already" >&2; exit 2; }
echo "soak: $duration s in $dir, nice $(nice), $(nproc) cores, crucible $(git rev-parse --short HEAD)"

# Stage 1, as `crucible run configs/quickstart.toml` does it, unless given.
policy=${SOAK_POLICY:-}
if [[ -z "$policy" ]]; then
  cat >"$dir/sft.toml" <<EOF
[log]
level = "info"
[learner]
objective = "sft"
policy = "$dir/policy-init"
sft_data = "$source_dir/configs/quickstart/seed.jsonl"
groups_per_batch = 8
learning_rate = 3e-3
warmup_steps = 10
total_steps = 250
min_lr_ratio = 0.1
publish_dir = "$dir/stage1"
metrics_file = "$dir/sft-metrics.jsonl"
EOF
  echo "soak: stage 1 (SFT, 25 epochs of configs/quickstart/seed.jsonl)..."
  "$bin/crucible-policy" init --model configs/quickstart/policy --out "$dir/policy-init" --seed 0 >"$dir/init.log" 2>&1
  "$bin/crucible" learner --config "$dir/sft.toml" --epochs 25 >"$dir/sft.log" 2>&1
  policy=$(ls -d "$dir"/stage1/v-* | sort -t- -k2 -n | tail -1)
fi
policy=$(cd "$policy" && pwd)
echo "soak: policy $policy"

# One config for every role: the quick-start's [learner], [rollout] and
# [referee] (configs/quickstart.toml), the referee in its own process, logs
# at info so that a warning or an error has its context.
cat >"$dir/soak.toml" <<EOF
[log]
level = "info"
[hub]
dead_after_ms = 10000
[bus]
dead_after_ms = 10000
[referee]
enabled = false
second_device_wait_ms = 5000
[learner]
objective = "grpo"
policy = "$policy"
groups_per_batch = 2
learning_rate = 5e-5
kl_beta = 0.05
max_staleness = 2
temperature = 0.7
reward_window = 256
checkpoint_every = 1
checkpoint_dir = "$dir/checkpoints"
publish_dir = "$dir/versions"
metrics_file = "$dir/metrics.jsonl"
EOF
for i in 0 1; do
  cat "$dir/soak.toml" - >"$dir/rollout-$i.toml" <<EOF
[rollout]
tasks_dir = "$source_dir/configs/tasks"
tasks = ["cpu/gelu_tanh", "cpu/layernorm_manual", "cpu/scale_relu", "cpu/softmax_manual"]
platform = "CPU"
prompt_template = "$source_dir/configs/prompts/compact.md"
exemplars = 2
group_size = 6
max_new_tokens = 320
temperature = 0.7
max_staleness = 2
max_pending_groups = 4
seed = $((1000003 * i))
state_file = "$dir/rollout-$i.state"
EOF
done

declare -A pid
start_role() {  # start_role NAME ARGS...
  local name=$1
  shift
  "$bin/crucible" "$@" >"$dir/$name.log" 2>&1 &
  pid[$name]=$!
  echo "${pid[$name]} $name" >>"$dir/pids"
}
stop_all() {
  local name
  for name in rollout-0 rollout-1 learner static exemplar evaluator referee hub; do
    [[ -n "${pid[$name]:-}" ]] && kill -TERM "${pid[$name]}" 2>/dev/null || true
  done
  for name in "${!pid[@]}"; do
    for _ in $(seq 100); do kill -0 "${pid[$name]}" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "${pid[$name]}" 2>/dev/null && echo "soak: $name did not stop in 10 s of SIGTERM" | tee -a "$dir/stop.txt"
  done
  wait 2>/dev/null || true
}
trap stop_all EXIT
trap 'exit 130' INT TERM

address=ipc://$dir/hub
# The hub's metrics page, for its held jobs by kind (hub-jobs.csv).
metrics_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
bus=(--config "$dir/soak.toml" --connect "$address")
: >"$dir/pids"
start_role hub hub --config "$dir/soak.toml" --bind "$address" --ledger "$dir/hub-ledger" \
  --metrics "127.0.0.1:$metrics_port"
sleep 1
start_role referee referee "${bus[@]}" --name referee --ledger "$dir/referee-ledger"
start_role evaluator evaluator "${bus[@]}" --name evaluator --tasks "$source_dir/configs/tasks" --protocol smoke
start_role exemplar exemplar "${bus[@]}" --name exemplar --db "$dir/exemplars"
start_role static detector "${bus[@]}" --name static --kind static --rules "$source_dir/configs/detectors/static.toml" --required
start_role learner learner "${bus[@]}" --name learner
for i in 0 1; do
  start_role rollout-$i rollout --config "$dir/rollout-$i.toml" --connect "$address" --name rollout-$i \
    --model "$policy" --groups 0
done
echo "soak: started $(wc -l <"$dir/pids") roles at $(date -u +%H:%M:%S) UTC; sampling every $interval s"

sample_rc=0
python3 tools/soak_report.py sample --dir "$dir" --interval "$interval" --duration "$duration" \
  --hub-metrics "http://127.0.0.1:$metrics_port/metrics" || sample_rc=$?
trap - EXIT
stop_all
report_rc=0
python3 tools/soak_report.py report --dir "$dir" --duration "$duration" >"$dir/report.txt" || report_rc=$?
cat "$dir/report.txt"
((sample_rc == 0 && report_rc == 0))
