"""Issue 9's tables from evaluator_fleet.py runs over the same jobs with
different numbers of GPUs (tools/gpu/evaluator_fleet.sh):

1. the fleet: evaluations per hour (evaluations / wall time of the run),
   per GPU, scaling efficiency against the 1-GPU run ((rate_n / n) /
   rate_1), the busy fraction (time with an evaluation running / wall) and
   nvidia-smi's utilization, averaged over the run's GPUs;
2. verification across GPUs under load: every pair of ok measurements of
   one job made on different GPUs (each while the other GPUs of its run
   were busy), judged by the referee's rule (the later within
   agree_within = 10% of the earlier: actors/referee/README.md), for all
   jobs and for those the referee verifies (speedup above verify_above =
   3); its cost is one more evaluation per verified candidate.

Usage: python fleet_table.py FLEET_JSONL...
"""

import json
import statistics
import sys

AGREE_WITHIN = 0.10
VERIFY_ABOVE = 3.0


def read(path):
    rows, summary = [], None
    for line in open(path):
        if line.strip():
            j = json.loads(line)
            if j.get("summary"):
                summary = j
            else:
                rows.append(j)
    return rows, summary


def fleet(runs):
    print("| GPUs | evaluations | wall s | evaluations / hour | per GPU | scaling efficiency | busy fraction "
          "| nvidia-smi utilization |")
    print("|---|---|---|---|---|---|---|---|")
    base = None
    for rows, s in sorted(runs, key=lambda r: len(r[1]["gpus"])):
        n = len(s["gpus"])
        rate = s["evaluations_per_hour"]
        if n == 1:
            base = rate
        busy = statistics.mean(s["busy_fraction"].values())
        util = [u for u in s["utilization"].values() if u is not None]
        print("| %d | %d%s | %.1f | %.0f | %.0f | %s | %.2f | %s |" % (
            n, s["evaluations"], " (%d cut)" % len(s["cut_by_deadline"]) if s["cut_by_deadline"] else "",
            s["wall_s"], rate, rate / n, "%.0f%%" % (100 * rate / n / base) if base else "-", busy,
            "%.2f" % statistics.mean(util) if util else "-"))


def verification(rows):
    by_job = {}
    for r in sorted(rows, key=lambda r: (r["repeat"], r["start_s"])):
        if r["status"] == "ok":
            by_job.setdefault(r["job"], []).append(r)
    pairs = []
    for job, ms in by_job.items():
        for i, a in enumerate(ms):
            for b in ms[i + 1:]:
                if a["gpu"] != b["gpu"]:
                    pairs.append((job, a, b, abs(b["speedup_raw"] - a["speedup_raw"]) / a["speedup_raw"]))
    print("| pairs of one job on different GPUs | agree within %.0f%% | largest difference | median difference |"
          % (100 * AGREE_WITHIN))
    print("|---|---|---|---|")
    for label, sel in (("all jobs", pairs),
                       ("jobs above %gx (the referee verifies these)" % VERIFY_ABOVE,
                        [p for p in pairs if p[1]["speedup_raw"] > VERIFY_ABOVE])):
        if sel:
            worst = max(sel, key=lambda p: p[3])
            print("| %s: %d | %d | %.1f%% (%s) | %.2f%% |" % (
                label, len(sel), sum(1 for p in sel if p[3] <= AGREE_WITHIN), 100 * worst[3], worst[0],
                100 * statistics.median(p[3] for p in sel)))
    every = [r for ms in by_job.values() for r in ms]
    verified = [r for r in every if r["speedup_raw"] > VERIFY_ABOVE]
    if every:
        print("\n- cost: %d of %d ok evaluations are above %gx; verifying each costs one more evaluation "
              "(median %.1f s for those jobs), %.0f%% more GPU time over this job mix" % (
                  len(verified), len(every), VERIFY_ABOVE,
                  statistics.median(r["duration_s"] for r in verified) if verified else 0,
                  100 * sum(r["duration_s"] for r in verified) / sum(r["duration_s"] for r in every)))


def main():
    runs = [read(p) for p in sys.argv[1:]]
    runs = [r for r in runs if r[1] is not None]
    fleet(runs)
    print()
    verification([row for rows, _ in runs for row in rows])


if __name__ == "__main__":
    main()
