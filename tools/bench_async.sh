#!/usr/bin/env bash
# Asynchrony pays (issue 8): the quick-start's stage 3 run synchronously
# ([learner] and [rollout] max_staleness 0: a rollout starts a group only
# when the learner will train it at the version that samples it) and
# asynchronously (max_staleness 2), same policy, tasks, evaluator and group
# count, one after the other on this machine; groups settled per hour of
# each and the ratio.
# Usage: tools/bench_async.sh [GROUPS]   (default 24; about 15 minutes)
set -euo pipefail
cd "$(dirname "$0")/.."
GROUPS_WANTED=${1:-24}
work=$(mktemp -d /tmp/crucible-async.XXXXXX)
trap 'rm -rf "$work"' EXIT

# Stage 1 once (configs/quickstart.toml's), then both runs start from it.
sed -e "s/^groups = .*/groups = 1/" configs/quickstart.toml > "$work/stage1.toml"
build/bin/crucible run "$work/stage1.toml" --run-dir "$work/stage1" > "$work/stage1.out"
policy=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['policy'])" "$work/stage1/stage1.json")

for staleness in 0 2; do
  sed -e "s#^policy = .*#policy = \"$policy\"#" -e "s/^sft_data = .*/sft_data = \"\"/" \
      -e "s/^groups = .*/groups = $GROUPS_WANTED/" -e "s/^max_staleness = .*/max_staleness = $staleness/" \
      configs/quickstart.toml > "$work/s$staleness.toml"
  build/bin/crucible run "$work/s$staleness.toml" --run-dir "$work/s$staleness" > "$work/s$staleness.out"
done

python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
rows = {}
for s in (0, 2):
    j = json.load(open(f"{work}/s{s}/summary.json"))
    rows[s] = j
print(f"{'max_staleness':>13} {'groups':>7} {'samples':>8} {'seconds':>8} {'groups/hour':>12} {'mean reward':>12} {'success':>8}")
for s, j in rows.items():
    print(f"{s:>13} {j['groups']:>7} {j['samples']:>8} {j['elapsed_s']:>8.0f} {j['groups_per_hour']:>12.1f} "
          f"{j['last_fifth']['mean_reward']:>12.3f} {j['last_fifth']['success_rate']:>8.3f}")
print(f"asynchronous / synchronous groups per hour: {rows[2]['groups_per_hour'] / rows[0]['groups_per_hour']:.2f}x")
PY
