"""The GPU's clocks, power and temperature during each evaluation's timed
phase, beside what the evaluation settled: does a reward that moves between
passes follow the state the GPU was in while it was timed (issue 18: L2-14's
launch-bound rewrite settles 1.29 in a warm sequence and 1.39 alone)?

Reads nvidia-smi's samples (`--query-gpu=timestamp,clocks.sm,clocks.mem,
power.draw,temperature.gpu,clocks_event_reasons.active --format=csv,noheader,
nounits -lms 100`) and a crucible-bench-eval run's JSON lines, and prints a
line per evaluation: job, pass, repeat, reward, the candidate's and the
reference's microseconds, and over the timing phase (from the end of the
evaluation less its close and timing phases to the end less its close) the
mean SM and memory clocks (MHz), power (W), temperature (C) and the event
reasons seen (nvidia-smi's bit mask, hex; 0x1 idle, 0x4 power cap, 0x20 SW
thermal, 0x40 HW slowdown), and the measuring thread's own host over the
same phase (the evaluation's timing_host: the cores it was seen on, the
milliseconds it waited runnable for a CPU, its involuntary switches).

Usage: python3 tools/gpu/gpu_clocks.py GPU_CLOCKS.csv RUN.jsonl
Called by tools/gpu/reward_integrity.sh (step 3).
"""
import sys

from gpu_busy import evaluations, stamp  # beside this file


def samples(path):
    out = []
    with open(path) as f:
        for line in f:
            parts = [p.strip() for p in line.split(",")]
            if len(parts) != 6:
                continue  # a line cut by the sampler's kill, or an error line
            try:
                out.append((stamp(parts[0]), [float(p) for p in parts[1:5]], parts[5]))
            except ValueError:
                continue
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    clocks = samples(sys.argv[1])
    if not clocks:
        sys.exit("%s: no samples (nvidia-smi refused the query?)" % sys.argv[1])
    print("| job | pass | repeat | reward | cand us | ref us | SM MHz | mem MHz | W | C | reasons | samples "
          "| cores | run-queue ms | switches |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for e in evaluations(sys.argv[2]):
        phases = e.get("phase_s", {})
        end = e["finished_unix"] - phases.get("close", 0)
        start = end - phases.get("timing", 0)
        inside = [(v, r) for t, v, r in clocks if start <= t <= end]
        if inside:
            means = ["%.0f" % (sum(v[i] for v, _ in inside) / len(inside)) for i in range(4)]
            reasons = " ".join(sorted({r for _, r in inside}))
        else:
            means, reasons = ["-"] * 4, "-"
        host = e.get("timing_host", {})
        print("| %s | %s | %s | %s | %.2f | %.2f | %s | %d | %s | %.1f | %s |" % (
            e.get("job", "?"), e.get("pass", "-"), e.get("repeat", "-"), e.get("reward", 0),
            e.get("cand_us", 0), e.get("ref_us", 0), " | ".join(means + [reasons]), len(inside),
            ",".join(str(c) for c in host.get("cores", [])) or "-", 1e3 * host.get("runqueue_wait_s", 0),
            host.get("involuntary_switches", "-")))


if __name__ == "__main__":
    main()
