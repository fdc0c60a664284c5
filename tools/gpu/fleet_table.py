"""Issue 9's tables from evaluator_fleet.py runs over the same jobs with
different numbers of GPUs (tools/gpu/evaluator_fleet.sh):

1. the fleet: evaluations per hour (evaluations / wall time of the run),
   per GPU, the busy fraction (time with an evaluation running / wall) and
   nvidia-smi's utilization, averaged over the run's GPUs, and the scaling
   efficiency against the 1-GPU run (see fleet(): runs cut at different
   points of the job list have different mixes, so it compares the same
   jobs);
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
            elif j["status"] != "evaluator_failed":  # crucible eval refused or failed: no evaluation
                rows.append(j)
    return rows, summary


def fleet(runs):
    """Evaluations per hour of each run; its efficiency against the 1-GPU
    run is the busy fraction times how much faster the same jobs evaluated
    there (1-GPU duration / this run's duration, over the jobs both ran), so
    that runs cut at different points of the job list compare fairly."""
    print("| GPUs | evaluations | wall s | evaluations / hour | per GPU | busy fraction | nvidia-smi utilization "
          "| same jobs: 1-GPU s / this run's s | scaling efficiency |")
    print("|---|---|---|---|---|---|---|---|---|")
    ordered = sorted(runs, key=lambda r: (len(r[1]["gpus"]), r[1]["repeat"]))
    alone = {r["job"]: r["duration_s"] for r in ordered[0][0]} if len(ordered[0][1]["gpus"]) == 1 else {}
    for rows, s in ordered:
        n = len(s["gpus"])
        rate = 3600 * len(rows) / s["wall_s"]
        busy = statistics.mean(s["busy_fraction"].values())
        util = [u for u in s["utilization"].values() if u is not None]
        common = [r for r in rows if r["job"] in alone]
        ratio = (sum(alone[r["job"]] for r in common) / sum(r["duration_s"] for r in common)) if common else None
        print("| %d | %d%s | %.1f | %.0f | %.0f | %.2f | %s | %s | %s |" % (
            n, len(rows), " (%d cut)" % len(s["cut_by_deadline"]) if s["cut_by_deadline"] else "",
            s["wall_s"], rate, rate / n, busy, "%.2f" % statistics.mean(util) if util else "-",
            "%.2f over %d jobs" % (ratio, len(common)) if ratio else "-",
            "%.0f%%" % (100 * busy * ratio) if ratio else "-"))


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
