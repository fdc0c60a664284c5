#!/usr/bin/env bash
# Issue 8's asynchrony figure on a GPU node: the quick-start workload
# (configs/quickstart.toml: its CPU tasks, G = 6, its learner) with the
# rollouts sampling on the GPU and EVALUATORS CPU evaluators (one core each),
# run for the same wall time with max_staleness 0 (synchronous) and 2;
# prints groups settled per hour side by side and their ratio.
#
#   tools/gpu/loop_async.sh DEBS_DIR POLICY_DIR [WORK]
#
# DEBS_DIR: Debian 12 packages of the dependencies (docs/gpu.md step 1);
# POLICY_DIR: a stage-1 policy (a run folder's stage1/v-N), so that both runs
# start from the same weights and skip stage 1. Environment: EVALUATORS (12),
# ROLLOUTS (4), SECONDS_EACH (100), STALENESS ("0 2"), LOG_LEVEL (info),
# JOBS (nproc), PYTHON (python3 with torch). Each run's run.log and
# summary.json are copied under $OUT when it is set.
set -uo pipefail
if (($# < 2)); then
  sed -n '2,15p' "$0"
  exit 2
fi
cd "$(dirname "$0")/../.."
source tools/gpu/kernelbench_common.sh
debs=$(realpath "$1")
policy=$(realpath "$2")
work=$(realpath -m "${3:-/tmp/crucible-loop-async}")
py=$(command -v "${PYTHON:-python3}")
mkdir -p "$work"
unpack_debs "$debs"

build=${BUILD_DIR:-build-gpu-loop}
build_crucible "$build" "$py" "$work" || exit 1

# configs/quickstart.toml with the policy given, no stage 1, the evaluators
# and rollouts asked for, the rollouts on the GPU and a wall-time limit.
config() {
  sed -e "s#^policy = .*#policy = \"$policy\"#" -e 's#^sft_data = .*#sft_data = ""#' \
    -e "s#^evaluators = .*#evaluators = ${EVALUATORS:-12}#" -e "s#^rollouts = .*#rollouts = ${ROLLOUTS:-4}#" \
    -e "s#^groups = .*#groups = 0\ntime_limit_s = ${SECONDS_EACH:-100}#" \
    -e "s#^max_staleness = .*#max_staleness = $1#" -e 's#^\[rollout\]#[rollout]\ndevice = "cuda"#' \
    -e "s#^level = .*#level = \"${LOG_LEVEL:-info}\"#" \
    configs/quickstart.toml >"$work/async-$1.toml"
}

table="| max_staleness | seconds | groups | samples | groups/hour | first fifth reward, success | last fifth reward, success |"
rows=()
for s in ${STALENESS:-0 2}; do
  config "$s"
  rm -rf "$work/run-$s"
  echo "=== max_staleness $s: ${EVALUATORS:-12} CPU evaluators, ${ROLLOUTS:-4} rollouts on the GPU, ${SECONDS_EACH:-100} s"
  t0=$SECONDS
  "$build/bin/crucible" run "$work/async-$s.toml" --run-dir "$work/run-$s" 2>&1 | grep -v '^stage 3: \[' | tail -8
  rows+=("$("$py" - "$work/run-$s/summary.json" "$s" "$((SECONDS - t0))" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
f, l = s["first_fifth"], s["last_fifth"]
print(f"| {sys.argv[2]} | {sys.argv[3]} | {s['groups']} | {s['samples']} | {s.get('groups_per_hour', 0):.1f} | "
      f"{f['mean_reward']:.3f}, {f['success_rate']:.3f} | {l['mean_reward']:.3f}, {l['success_rate']:.3f} |")
EOF
)")
  if [[ -n "${OUT:-}" ]]; then
    cp "$work/run-$s/summary.json" "$OUT/summary-$s.json" 2>/dev/null
    cp "$work/run-$s/run.log" "$OUT/run-$s.log" 2>/dev/null
  fi
done
echo "$table"
echo "|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
"$py" - "$work/run-0/summary.json" "$work/run-2/summary.json" <<'EOF'
import json, sys
a, b = (json.load(open(p)).get("groups_per_hour", 0) for p in sys.argv[1:])
print(f"asynchronous / synchronous: {b / a:.2f}x" if a else "no synchronous figure")
EOF
