"""The GPU's busy fraction over each pass of a crucible-bench-eval run.

Reads nvidia-smi's samples (`--query-gpu=timestamp,utilization.gpu
--format=csv,noheader,nounits -lms 200`: the share of each sample period in
which a kernel ran) and the run's JSON lines (each evaluation's
`finished_unix`, `duration_s` and, with --compare-cold, `pass`), and prints
one line per pass: the mean utilisation over the pass's wall-clock window,
from the start of its first evaluation to the end of its last.

Usage: python3 tools/gpu/gpu_busy.py GPU_UTIL.csv RUN.jsonl
Called by tools/gpu/reward_integrity.sh.
"""
import datetime
import json
import sys


def samples(path):
    out = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            parts = [p.strip() for p in line.split(",")]
            if len(parts) != 2 or not parts[1].isdigit():
                continue  # a line cut by the sampler's kill
            stamp = datetime.datetime.strptime(parts[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
            out.append((stamp, int(parts[1])))
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    util = samples(sys.argv[1])
    windows = {}
    with open(sys.argv[2]) as f:
        for n, line in enumerate(f, 1):
            try:
                e = json.loads(line)
            except ValueError:
                sys.exit("%s:%d: not JSON" % (sys.argv[2], n))
            end = e["finished_unix"]
            lo, hi = windows.get(e.get("pass", "all"), (end - e["duration_s"], end))
            windows[e.get("pass", "all")] = (min(lo, end - e["duration_s"]), max(hi, end))
    for name, (lo, hi) in windows.items():
        inside = [u for t, u in util if lo <= t <= hi]
        if not inside:
            print("GPU busy, %s pass: no samples in its window" % name)
            continue
        print("GPU busy, %s pass: %.3f (mean utilization.gpu of %d samples over %.0f s)" %
              (name, sum(inside) / 100.0 / len(inside), len(inside), hi - lo))


if __name__ == "__main__":
    main()
