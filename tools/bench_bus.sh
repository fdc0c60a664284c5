#!/usr/bin/env bash
# Jobs through the hub against raw ZeroMQ ROUTER/DEALER (same hops, nothing
# else) on this machine in the same run: throughput, p50/p99 round trip and
# the ratio, at 1 KiB and 64 KiB, plus null jobs with 4 workers.
# Usage: tools/bench_bus.sh [BUILD_DIR]   (default build)
set -euo pipefail
cd "$(dirname "$0")/.."
B="${1:-build}/bin"
work=$(mktemp -d)
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
COUNT=${COUNT:-20000}
WORKERS=4
SLOTS=${SLOTS:-64}

field() { python3 -c "import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])" "$1" "$2"; }

raw() {  # raw BYTES IN_FLIGHT COUNT
  local port=$((7200 + RANDOM % 500 * 2))
  "$B/crucible-bench-raw" broker --bind "tcp://127.0.0.1:$port" & pids+=($!)
  local wp=()
  for _ in $(seq $WORKERS); do "$B/crucible-bench-raw" worker --connect "tcp://127.0.0.1:$port" & wp+=($!); done
  sleep 0.3
  "$B/crucible-bench-raw" client --connect "tcp://127.0.0.1:$port" --count "$3" --payload-bytes "$1" --in-flight "$2"
  kill "${wp[@]}" "${pids[-1]}" 2>/dev/null; wait "${wp[@]}" "${pids[-1]}" 2>/dev/null || true
}

hub() {  # hub BYTES IN_FLIGHT COUNT KIND
  local port=$((8200 + RANDOM % 500 * 3))
  "$B/crucible" hub --bind "tcp://127.0.0.1:$port" --ledger "$work/ledger-$port" --log-level warn & local hp=$!
  local wp=()
  for i in $(seq $WORKERS); do
    "$B/crucible" worker --connect "tcp://127.0.0.1:$port" --name "w$i" --slots "$SLOTS" --log-level warn & wp+=($!)
  done
  sleep 0.5
  "$B/crucible" submit --connect "tcp://127.0.0.1:$port" --count "$3" --payload-bytes "$1" --in-flight "$2" \
    --kind "${4:-echo}" --json
  kill "${wp[@]}" "$hp" 2>/dev/null; wait "${wp[@]}" "$hp" 2>/dev/null || true
}

printf "%-34s %12s %12s %10s %10s %10s %10s %8s\n" case hub_jobs/s raw_jobs/s ratio hub_p50us hub_p99us raw_p99us
row() {  # row NAME BYTES IN_FLIGHT COUNT [KIND]
  local h r
  h=$(hub "$2" "$3" "$4" "${5:-echo}")
  r=$(raw "$2" "$3" "$4")
  python3 - "$1" "$h" "$r" <<'PY'
import json, sys
name, h, r = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
print(f"{name:<34} {h['jobs_per_s']:12.0f} {r['jobs_per_s']:12.0f} {h['jobs_per_s']/r['jobs_per_s']:10.2f} "
      f"{h['p50_us']:10.0f} {h['p99_us']:10.0f} {r['p99_us']:10.0f}")
PY
}

row "1 KiB, 1 in flight (latency)" 1024 1 $((COUNT / 10))
row "1 KiB, 256 in flight (throughput)" 1024 256 "$COUNT"
row "64 KiB, 1 in flight (latency)" 65536 1 $((COUNT / 20))
row "64 KiB, 64 in flight (throughput)" 65536 64 $((COUNT / 4))
row "null jobs, 4 workers, 512 in flight" 0 512 "$COUNT" null
echo "(4 workers with $SLOTS slots each; hub ledger on disk, buffered WAL)"
