#!/usr/bin/env bash
# Issue 22 on a one-GPU node: configs/h200.toml's loop on KernelBench levels
# 1 and 2 with one CUDA evaluator owning the GPU and the policy (a tiny one,
# initialised at random: no pretrained model can be loaded here) on the CPU
# cores. Stage 1 on the kernels this evaluator settled ok
# (tools/quickstart/make_seed_corpus.py --verified: CUDA-L1's kernels and
# KernelBench's references from docs/results/cuda_l1_*_h200.jsonl) with the
# exemplar store seeded with them at their settled rewards, once per WORK
# (WORK/run-stage1); stage 2 (success-only REINFORCE, [learner] objective =
# "reinforce") for STAGE2_S seconds from the stage-1 weights, once per WORK
# (WORK/run-stage2; STAGE2_S=0 skips it); then, from the last weights,
# stage 3 for RUN_S seconds with each max_staleness of STALENESS. Prints for each run:
# candidates settled per GPU-hour, the evaluator GPU's busy fraction
# (nvidia-smi every 0.25 s through stage 3, and the evaluator's own busy
# seconds), statuses and defences fired, the learner's staleness
# distribution, groups per hour and the ratio of the first run's to the
# last's (asynchronous over synchronous); exports each run's kernels
# (`crucible kernels export`).
#
#   tools/gpu/stage3_kernelbench.sh DEBS_DIR KERNELBENCH_DIR CUDA_L1_DIR [WORK]
#
# DEBS_DIR: Debian 12 packages of the dependencies (docs/gpu.md step 1), or
# "-" with CRUCIBLE=path/to/crucible already built; KERNELBENCH_DIR: holds
# level1/, level2/ (.kb); CUDA_L1_DIR: CUDA-L1's release (.cl1). WORK
# (/tmp/crucible-stage3): a folder kept between calls (build-gpu-loop/stage3
# on the lent machine) lets stage 1 and each run go in calls of their own.
# Environment: RUN_S (480), STAGE2_S (120), STALENESS ("4 0"; "" for stages 1
# and 2 alone), TASKS
# ("level1/* level2/*"; or e.g. "level1/19 level1/88"), EVAL_DEVICES (cuda:0;
# "cpu" for one CPU evaluator, a check of the script without a GPU), RESULTS
# (the two docs/results files), SFT_EXAMPLES (64, drawn at random from the
# verified set; 0 = all), SFT_EPOCHS (1), STAGE1_DEVICE (the config's [sft]
# device, cpu; cuda:0 trains stage 1 on the GPU before the evaluator takes
# it: a random policy needs hundreds of steps, e.g. SFT_EPOCHS=88 on 64
# examples, before it writes code blocks), ROLLOUTS (8), GROUP_SIZE (8),
# MAX_NEW_TOKENS (2048), PROTOCOL (default), JOBS, PYTHON. table.md (every
# run of WORK), the kernels and all.tgz go under $OUT when it is set.
set -uo pipefail
if (($# < 3)); then
  sed -n '2,37p' "$0"
  exit 2
fi
cd "$(dirname "$0")/../.."
source tools/gpu/kernelbench_common.sh
kb=$(realpath "$2")
cl1=$(realpath "$3")
work=$(realpath -m "${4:-/tmp/crucible-stage3}")
py=$(command -v "${PYTHON:-python3}")
eval_devices=${EVAL_DEVICES:-cuda:0}
run_s=${RUN_S:-480}
results=${RESULTS:-docs/results/cuda_l1_a100_h200.jsonl docs/results/cuda_l1_samples_h200.jsonl}
mkdir -p "$work"
crucible_for "$1" "$py" "$work" || exit 1

echo "=== task set (${TASKS:-level1/* level2/*}), tiny policy"
rm -rf "$work/tasks" "$work/policy"
for spec in ${TASKS:-level1/* level2/*}; do
  level=${spec%%/*} number=${spec#*/}
  mkdir -p "$work/tasks/$level"
  if [[ "$number" == "*" ]]; then
    cp "$kb/$level"/*.py "$work/tasks/$level/"
  else
    cp "$kb/$level/${number}"_*.py "$work/tasks/$level/" || exit 1
  fi
done
echo "$(find "$work/tasks" -name '*.py' | wc -l) tasks"
tiny_kernelbench_policy "$py" "$work/policy"

# configs/h200.toml with this run's paths and sizes; $1 = max_staleness,
# $2 = policy folder, $3 = stage 1 data ("" for none).
write_config() {
  "$py" - configs/h200.toml "$work/stage3-$1.toml" "$1" "$2" "$3" <<EOF
import json, sys, tomllib
c = tomllib.load(open(sys.argv[1], "rb"))
policy, sft = sys.argv[4], sys.argv[5]
run, ro, lo = c["run"], c["rollout"], c["learner"]
staleness = int(sys.argv[3]) if sys.argv[3].isdigit() else lo["max_staleness"]  # "stage1", "stage2": the config's
if sys.argv[3] == "stage2":
    lo["objective"] = "reinforce"
if sys.argv[3] == "stage1" and "${STAGE1_DEVICE:-}":
    c["sft"]["device"] = "${STAGE1_DEVICE:-}"  # the GPU is free until stage 3's evaluator takes it
run.update(policy=policy, sft_data=sft, sft_epochs=int("${SFT_EPOCHS:-1}"), tasks_dir="$work/tasks",
           time_limit_s=float("$run_s"), rollouts=int("${ROLLOUTS:-8}"), protocol="${PROTOCOL:-default}",
           exemplar_seed=["$cl1/%s.json" % g for g in ("a100", "l40", "3090", "h20")],
           exemplar_settled=[__import__("os").path.abspath(r) for r in "$results".split()])
if "$eval_devices" == "cpu":
    run.pop("devices", None)
    run["evaluators"] = 1
else:
    run["devices"] = "$eval_devices".split(",")
ro.update(tasks_dir="$work/tasks", tasks=sorted({t.rsplit("/", 1)[0] + "/*" for t in "${TASKS:-level1/* level2/*}".split()}),
          group_size=int("${GROUP_SIZE:-8}"), max_new_tokens=int("${MAX_NEW_TOKENS:-2048}"), max_staleness=staleness)
lo["max_staleness"] = staleness
def value(v):
    if isinstance(v, bool): return "true" if v else "false"
    if isinstance(v, (int, float)): return repr(v)
    if isinstance(v, str): return json.dumps(v)
    return "[" + ", ".join(value(x) for x in v) + "]"
with open(sys.argv[2], "w") as f:
    f.write("# Written by tools/gpu/stage3_kernelbench.sh from configs/h200.toml.\n")
    for section, keys in c.items():
        f.write("\n[%s]\n" % section + "".join("%s = %s\n" % (k, value(v)) for k, v in keys.items()))
EOF
}

# The policy folder a stage's record (stage1.json, stage2.json) names.
policy_of() { "$py" -c 'import json, sys; print(json.load(open(sys.argv[1]))["policy"])' "$1"; }

staleness_list=(${STALENESS-4 0})
stage1=$work/run-stage1
if [[ ! -f "$stage1/stage1.json" ]]; then
  write_config stage1 "$work/policy" "$work/sft.jsonl" || exit 1
  echo "=== stage 1 data from the verified results ($results)"
  start=$SECONDS
  # shellcheck disable=SC2046
  "$py" tools/quickstart/make_seed_corpus.py --crucible "$crucible" --config "$work/stage3-stage1.toml" \
    $(printf -- '--verified %s ' $results) --cuda-l1 "$cl1" --kernelbench "$work/tasks" --levels 1,2 \
    --jobs "${JOBS:-$(nproc)}" --out "$work/sft-verified.jsonl" | tee "$work/sft-summary.txt" || exit 1
  "$py" - "$work/sft-verified.jsonl" "$work/sft.jsonl" "${SFT_EXAMPLES:-64}" <<'EOF2'
import random, sys
lines = open(sys.argv[1]).readlines()
k = int(sys.argv[3])
if 0 < k < len(lines):
    lines = random.Random(0).sample(lines, k)
open(sys.argv[2], "w").writelines(lines)
print(f"stage 1 on {len(lines)} examples ({sys.argv[2]})")
EOF2
  examples=$(wc -l <"$work/sft.jsonl")
  ((examples > 0)) || { echo "no verified kernel for these tasks: nothing to train stage 1 on"; exit 1; }
  steps=$(( ${SFT_EPOCHS:-1} * ((examples + 7) / 8) ))
  # Stage 1 alone: the loop's stage 3 stops after a second. Warm-up: a tenth
  # of the steps.
  sed -i -e "s/^\[sft\]$/[sft]\ntotal_steps = $steps/" -e "s/^warmup_steps = .*/warmup_steps = $((steps / 10))/" \
    -e "s/^time_limit_s = .*/time_limit_s = 1.0/" "$work/stage3-stage1.toml"
  echo "data in $((SECONDS - start)) s; stage 1: $steps steps"
  rm -rf "$stage1"
  "$crucible" run "$work/stage3-stage1.toml" --run-dir "$stage1" 2>&1 | tee "$work/run-stage1.out" |
    grep -E '^(policy|stage 1)' || exit 1
  [[ -f "$stage1/stage1.json" ]] || { echo "stage 1 failed: $work/run-stage1.out"; exit 1; }
  grep -o 'seeded from .*' "$stage1/run.log" | head -1 | sed 's/^/exemplar store /'
else
  echo "=== stage 1 done earlier: $(cat "$stage1/stage1.json")"
fi
v=$(policy_of "$stage1/stage1.json")

# Stage 2 from the stage-1 weights: its last published version is where
# stage 3 starts (WORK/run-stage2/stage2.json records it).
stage2=$work/run-stage2
if ((${STAGE2_S:-120} > 0)); then
  if [[ ! -f "$stage2/stage2.json" ]]; then
    write_config stage2 "$v" "" || exit 1
    sed -i "s/^time_limit_s = .*/time_limit_s = ${STAGE2_S:-120}.0/" "$work/stage3-stage2.toml"
    echo "=== stage 2 (success-only REINFORCE), ${STAGE2_S:-120} s from $v"
    rm -rf "$stage2"
    "$crucible" run "$work/stage3-stage2.toml" --run-dir "$stage2" 2>&1 | tee "$work/run-stage2.out" |
      grep -E '^(policy|stage [23])' | grep -v '^stage 3: \[' | tail -4
    n=$(ls "$stage2/versions" 2>/dev/null | sed -n 's/^v-\([0-9]*\)$/\1/p' | sort -n | tail -1)
    last=$stage2/versions/v-$n
    if [[ -n "$n" && -f "$last/model.safetensors" ]]; then
      printf '{"policy": "%s"}\n' "$last" >"$stage2/stage2.json"
    else
      echo "stage 2 published no version: stage 3 starts from stage 1 ($work/run-stage2.out)"
    fi
  fi
  [[ -f "$stage2/stage2.json" ]] && v=$(policy_of "$stage2/stage2.json")
  echo "=== stage 3 starts from $v"
fi

metrics_port=$("$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
for s in "${staleness_list[@]}"; do
  run=$work/run-$s
  rm -rf "$run"
  write_config "$s" "$v" "" || exit 1
  echo "=== crucible run, max_staleness $s: $run_s s of stage 3 from $v"
  : >"$work/util-$s.txt"
  if [[ "$eval_devices" != cpu ]]; then
    sample_gpu_busy "$eval_devices" "$work/util-$s.txt"
  fi
  # The run's Prometheus endpoint, kept every 5 s: the evaluator's defences
  # fired and busy seconds at the end of stage 3.
  (while :; do
    "$py" -c 'import sys, urllib.request; open(sys.argv[2], "wb").write(urllib.request.urlopen(sys.argv[1], timeout=2).read())' \
      "http://127.0.0.1:$metrics_port/metrics" "$work/metrics-$s.tmp" 2>/dev/null && mv "$work/metrics-$s.tmp" "$work/metrics-$s.txt"
    sleep 5
  done) &
  scraper=$!
  rm -f "$work/stage3-$s.start" "$work/metrics-$s.txt"
  "$crucible" run "$work/stage3-$s.toml" --run-dir "$run" --metrics "127.0.0.1:$metrics_port" 2>&1 | tee "$work/run-$s.out" |
    while IFS= read -r line; do
      [[ "$line" == "stage 3:"* && ! -f "$work/stage3-$s.start" ]] && date +%s.%N >"$work/stage3-$s.start"
      [[ "$line" == *"info run@"* ]] || echo "$line"
    done | grep -v '^stage 3: \[' | tail -8
  kill "$scraper" 2>/dev/null
  [[ -n "${sampler:-}" ]] && kill "$sampler" 2>/dev/null
  grep -o 'seeded from .*' "$run/run.log" | head -1 | sed 's/^/exemplar store /'
  "$crucible" kernels export --run "$run" --out "$work/kernels-$s.jsonl" && echo "kernels found: $(wc -l <"$work/kernels-$s.jsonl")"
done

# Every run of this work folder (a run per call when RUN_S is long: docs/gpu.md).
done_runs=$(cd "$work" && ls -d run-*/summary.json 2>/dev/null | grep -v 'stage[12]' | sed 's#run-\(.*\)/summary.json#\1#' | sort -rn)
[[ -n "$done_runs" ]] || exit 0
# shellcheck disable=SC2086
"$py" tools/gpu/stage3_table.py --work "$work" --devices "$eval_devices" $done_runs | tee "$work/table.md"
if [[ -n "${OUT:-}" ]]; then
  # One archive whose name sorts first (docs/gpu.md: only a few files of $OUT come back).
  tar -czf "$OUT/all.tgz" -C "$work" --exclude='run-*/hub-ledger' --exclude='run-*/exemplars' --exclude='run-*/checkpoints' \
    --exclude='run-*/versions' --exclude='run-*/stage1' --exclude='run-*/policy-init' --exclude=tasks . 2>/dev/null
  cp "$work/table.md" "$OUT/"
  cat "$work"/kernels-*.jsonl >"$OUT/kernels.jsonl" 2>/dev/null
fi
