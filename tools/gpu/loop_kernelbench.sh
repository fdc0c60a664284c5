#!/usr/bin/env bash
# Issue 8's loop on a GPU node with CUDA evaluators on KernelBench level 1:
# a tiny policy (the quick-start's tokenizer, 2.6 M parameters) goes
# through stage 1 on a seed corpus of KernelBench candidates made here
# (make_kernelbench_tasks.py: the reference as ModelNew, slower, incorrect
# and broken variants, the known-faster rewrites of tools/gpu/kernelbench_faster;
# scored on the GPUs), then stage 3 for STAGE3_SECONDS with the rollouts and
# the learner on POLICY_DEVICE and one CUDA evaluator per EVAL_DEVICES entry
# (each owns its GPU). Prints the evaluator GPUs' busy fraction (nvidia-smi
# utilization sampled every 0.25 s through stage 3) and candidates per
# GPU-hour beside the loop's own figures.
#
#   tools/gpu/loop_kernelbench.sh DEBS_DIR KERNELBENCH_DIR [WORK]
#
# DEBS_DIR: Debian 12 packages of the dependencies (docs/gpu.md step 1), or
# "-" with CRUCIBLE=path/to/crucible already built; KERNELBENCH_DIR: holds
# level1/ (a copy of ../shared/kernelbench, e.g. .kb). Environment:
# PROBLEMS ("level1/12 level1/88 level1/23 level1/26"), POLICY_DEVICE
# (cuda:0), EVAL_DEVICES (cuda:1; "cpu" for one CPU evaluator),
# SCORE_DEVICES (cuda:0,cuda:1), STAGE3_SECONDS (240), SFT_EPOCHS (100),
# PROTOCOL (default), JOBS, PYTHON. Run folder, logs and figures under WORK
# (/tmp/crucible-loop-kb), copied under $OUT when it is set.
set -uo pipefail
if (($# < 2)); then
  sed -n '2,22p' "$0"
  exit 2
fi
cd "$(dirname "$0")/../.."
source tools/gpu/kernelbench_common.sh
kb=$(realpath "$2")
work=$(realpath -m "${3:-/tmp/crucible-loop-kb}")
py=$(command -v "${PYTHON:-python3}")
policy_device=${POLICY_DEVICE:-cuda:0}
eval_devices=${EVAL_DEVICES:-cuda:1}
mkdir -p "$work"
crucible_for "$1" "$py" "$work" || exit 1

echo "=== task set and seed corpus"
rm -rf "$work/tasks" "$work/run"
"$py" tools/gpu/make_kernelbench_tasks.py --kernelbench "$kb" --faster tools/gpu/kernelbench_faster \
  --out "$work/tasks" ${PROBLEMS:-level1/12 level1/88 level1/23 level1/26} || exit 1
tasks=$(cd "$work/tasks" && printf '"%s", ' level1/* | sed 's/, $//')
tiny_kernelbench_policy "$py" "$work/policy"

if [[ "$eval_devices" == cpu ]]; then
  evaluators="evaluators = 1"
else
  evaluators="devices = [$(printf '"%s", ' ${eval_devices//,/ } | sed 's/, $//')]"
fi
cat >"$work/loop.toml" <<EOF
# Written by tools/gpu/loop_kernelbench.sh.
[log]
level = "info"
[hub]
dead_after_ms = 10000
[bus]
dead_after_ms = 10000
[run]
job = "loop"
policy = "$work/policy"
seed = 0
sft_data = "$work/seed.jsonl"
sft_epochs = ${SFT_EPOCHS:-100}
rollouts = 2
groups = 0
time_limit_s = ${STAGE3_SECONDS:-240}
$evaluators
protocol = "${PROTOCOL:-default}"
tasks_dir = "$work/tasks"
detectors = ["static"]
[sft]
device = "$policy_device"
groups_per_batch = 8
learning_rate = 3e-3
warmup_steps = 10
min_lr_ratio = 0.1
[learner]
objective = "grpo"
device = "$policy_device"
groups_per_batch = 2
learning_rate = 5e-5
kl_beta = 0.05
max_staleness = 2
temperature = 0.7
checkpoint_every = 1
[rollout]
device = "$policy_device"
tasks_dir = "$work/tasks"
tasks = [$tasks]
platform = "CUDA"
prompt_template = "configs/prompts/compact.md"
exemplars = 2
group_size = 6
max_new_tokens = 1536
temperature = 0.7
max_staleness = 2
max_pending_groups = 4
[referee]
second_device_wait_ms = 5000
[detector]
rules = "configs/detectors/static.toml"
EOF
start=$SECONDS
"$py" tools/quickstart/make_seed_corpus.py --crucible "$crucible" --config "$work/loop.toml" \
  --tasks "$work/tasks/level1" --prefix level1 --devices "${SCORE_DEVICES:-cuda:0,cuda:1}" \
  --variants faster,equal,slower,incorrect,not_compiling --out "$work/seed.jsonl" || exit 1
examples=$(wc -l <"$work/seed.jsonl")
steps=$(( ${SFT_EPOCHS:-100} * ((examples + 7) / 8) ))
sed -i "s/^\[sft\]$/[sft]\ntotal_steps = $steps/" "$work/loop.toml"
echo "corpus of $examples examples in $((SECONDS - start)) s; stage 1: $steps steps"

echo "=== crucible run (stage 1, then ${STAGE3_SECONDS:-240} s of stage 3)"
: >"$work/util.txt"
if [[ "$eval_devices" != cpu ]]; then
  sample_gpu_busy "$eval_devices" "$work/util.txt"
fi
"$crucible" run "$work/loop.toml" --run-dir "$work/run" 2>&1 | while IFS= read -r line; do
  [[ "$line" == "stage 3:"* && ! -f "$work/stage3.start" ]] && date +%s.%N >"$work/stage3.start"
  [[ "$line" == *"info run@"* ]] || echo "$line"
done | grep -v '^stage 3: \[' | tail -12
[[ -n "${sampler:-}" ]] && kill "$sampler"

"$py" - "$work" "$eval_devices" <<'EOF' | tee "$work/table.md"
import json, pathlib, sys
work, devices = pathlib.Path(sys.argv[1]), sys.argv[2].split(",")
s = json.load(open(work / "run/summary.json"))
rows = [json.loads(l) for l in open(work / "run/settlements.jsonl")]
t0 = float((work / "stage3.start").read_text())
t1 = t0 + s["elapsed_s"]
util = [list(map(float, l.split()[1:])) for l in open(work / "util.txt")
        if len(l.split()) > 1 and t0 <= float(l.split()[0]) <= t1]
evaluated = [r for r in rows if r["status"] != "NoCode"]
gpu_hours = s["elapsed_s"] / 3600 * len(devices)
busy = sum(sum(u) / len(u) for u in util) / len(util) / 100 if util else float("nan")
by = {}
for r in rows:
    by[r["status"]] = by.get(r["status"], 0) + 1
ok = [r for r in rows if r["status"] == "Success"]
f, l = s["first_fifth"], s["last_fifth"]
print("| stage 3 s | evaluator GPUs | groups | candidates settled | evaluated | evaluated per GPU-hour "
      "| GPU busy fraction | settlements | mean reward of successes | first fifth reward, success | last fifth |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
print(f"| {s['elapsed_s']:.0f} | {len(devices)} ({','.join(devices)}) | {s['groups']} | {len(rows)} | {len(evaluated)} "
      f"| {len(evaluated) / gpu_hours:.0f} | {busy:.3f} ({len(util)} samples) "
      f"| {', '.join(f'{k} {v}' for k, v in sorted(by.items()))} "
      f"| {sum(r['reward'] for r in ok) / len(ok) if ok else 0:.2f} "
      f"| {f['mean_reward']:.3f}, {f['success_rate']:.3f} | {l['mean_reward']:.3f}, {l['success_rate']:.3f} |")
for task in sorted({r["task"] for r in rows}):
    mine = [r for r in rows if r["task"] == task]
    best = max((r["reward"] for r in mine), default=0)
    print(f"  {task}: {len(mine)} candidates, {sum(r['status'] == 'Success' for r in mine)} correct, best reward {best:.2f}")
EOF
if [[ -n "${OUT:-}" ]]; then
  cp "$work/table.md" "$work/util.txt" "$work/loop.toml" "$work/run/summary.json" "$work/run/settlements.jsonl" \
    "$work/run/run.log" "$OUT/" 2>/dev/null
  cp "$work/run/report.html" "$OUT/" 2>/dev/null
fi
