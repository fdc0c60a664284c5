"""The GPU's busy fraction over each pass of a crucible-bench-eval run.

Reads nvidia-smi's samples (`--query-gpu=timestamp,utilization.gpu
--format=csv,noheader,nounits -lms 200`: the share of each sample period in
which a kernel ran) and the run's JSON lines (each evaluation's
`finished_unix`, `duration_s` and, with --compare-cold, `pass`), and prints
two lines per pass: the mean utilisation over the pass's wall-clock window,
from the start of its first evaluation to the end of its last, and from the
end of its first evaluation.

Usage: python3 tools/gpu/gpu_busy.py GPU_UTIL.csv RUN.jsonl
Called by tools/gpu/reward_integrity.sh.
"""
import datetime
import json
import sys


def stamp(text):
    """nvidia-smi's timestamp as Unix seconds (gpu_clocks.py uses it too)."""
    return datetime.datetime.strptime(text, "%Y/%m/%d %H:%M:%S.%f").timestamp()


def evaluations(path):
    """Each evaluation of a crucible-bench-eval run's JSON lines, in order
    (gpu_clocks.py uses it too); exits naming the line that is not JSON."""
    with open(path) as f:
        for n, line in enumerate(f, 1):
            try:
                yield json.loads(line)
            except ValueError:
                sys.exit("%s:%d: not JSON" % (path, n))


def samples(path):
    out = []
    with open(path) as f:
        for line in f:
            parts = [p.strip() for p in line.split(",")]
            if len(parts) != 2 or not parts[1].isdigit():
                continue  # a line cut by the sampler's kill
            out.append((stamp(parts[0]), int(parts[1])))
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    util = samples(sys.argv[1])
    windows = {}
    for e in evaluations(sys.argv[2]):
        end = e["finished_unix"]
        pass_name = e.get("pass", "all")
        if pass_name not in windows:  # [start, end of the first evaluation, end]
            windows[pass_name] = [end - e["duration_s"], end, end]
        w = windows[pass_name]
        w[0], w[2] = min(w[0], end - e["duration_s"]), max(w[2], end)
    for name, (lo, first_end, hi) in windows.items():
        # The whole pass, then from the end of its first evaluation (which,
        # in a warm pass, also waited for the pool's start).
        for label, start in (("", lo), (", after the first evaluation", first_end)):
            inside = [u for t, u in util if start <= t <= hi]
            if not inside:
                print("GPU busy, %s pass%s: no samples in its window" % (name, label))
                continue
            print("GPU busy, %s pass%s: %.3f (mean utilization.gpu of %d samples over %.0f s)" %
                  (name, label, sum(inside) / 100.0 / len(inside), len(inside), hi - start))


if __name__ == "__main__":
    main()
