"""The table of tools/gpu/kernelbench_eval.sh: crucible's evaluator against the
KernelBench-style baseline, per job, over their repeats.

Reads crucible-bench-eval --json-out lines and kernelbench_style_timing.py
lines; prints one Markdown row per job (rewards, raw speedups and their
spread (max - min) / median for crucible; speedups and spread for the
baseline), then the checks of issue 3: identity jobs (named identity/...)
settle at 1.00 with speedup_raw within 2% of 1, every job's crucible spread
is at most 2%, and the median seconds per evaluation against the paper's
1800 s window.

Usage: python kernelbench_table.py CRUCIBLE_JSONL BASELINE_JSONL
"""

import json
import statistics
import sys


NOT_EVALUATED = []  # evaluator_fleet.py rows where crucible eval itself failed (no evaluation ran)


def rows(path):
    out = {}
    try:
        for line in open(path):
            if line.strip():
                j = json.loads(line)
                if j.get("status") == "evaluator_failed":
                    NOT_EVALUATED.append(j)
                    continue
                out.setdefault(j["job"], []).append(j)
    except FileNotFoundError:
        pass
    return out


def spread(values):
    if len(values) < 2:
        return float("nan")
    m = statistics.median(values)
    return (max(values) - min(values)) / m if m > 0 else float("nan")


def main():
    ours, base = rows(sys.argv[1]), rows(sys.argv[2])
    print("| job | crucible rewards | speedup_raw | spread | median s | rounds | KernelBench-style speedups | spread |")
    print("|---|---|---|---|---|---|---|---|")
    failures, durations = [], []
    for job, evals in ours.items():
        ok = [e for e in evals if e["status"] == "ok"]
        raws = [e["speedup_raw"] for e in ok]
        durations += [e["duration_s"] for e in evals]
        status = ", ".join(sorted({e["status"] for e in evals if e["status"] != "ok"}))
        rewards = " ".join("%.2f" % e["reward"] for e in evals) + (" (%s)" % status if status else "")
        kb = [b["speedup"] for b in base.get(job, []) if "speedup" in b]
        kb_err = [b["error"] for b in base.get(job, []) if "error" in b]
        print("| %s | %s | %s | %.1f%% | %.1f | %s | %s | %s |" % (
            job, rewards, " ".join("%.4f" % r for r in raws), 100 * spread(raws),
            statistics.median([e["duration_s"] for e in evals]),
            "/".join(str(e["rounds"]) for e in evals),
            " ".join("%.3f" % s for s in kb) or (kb_err[0][:60] if kb_err else "-"),
            ("%.1f%%" % (100 * spread(kb))) if len(kb) > 1 else "-"))
        if len(ok) != len(evals):
            failures.append("%s: statuses %s" % (job, rewards))
        if job.startswith("identity/"):
            if any(e["reward"] != 1.0 for e in ok):
                failures.append("%s: identity rewards %s" % (job, rewards))
            if any(abs(r - 1) > 0.02 for r in raws):
                failures.append("%s: identity speedup_raw %s" % (job, raws))
        if len(raws) > 1 and not spread(raws) <= 0.02:
            failures.append("%s: spread %.1f%% over %d repeats" % (job, 100 * spread(raws), len(raws)))
    print()
    if durations:
        med = statistics.median(durations)
        print("- median seconds per evaluation: %.1f (the paper's window: 1800 s, %.0fx more)" % (med, 1800 / med))
        every = [e for v in ours.values() for e in v]
        print("- evaluations per hour (sums of evaluation durations): %.0f over %d evaluations" % (
            3600 * len(every) / sum(durations), len(every)))
        statuses = {}
        for e in every:
            statuses[e["status"]] = statuses.get(e["status"], 0) + 1
        fired = sorted({"%s: %s" % (e["job"], ",".join(e["defences_fired"])) for e in every if e.get("defences_fired")})
        print("- statuses: %s; defences fired: %s" % (
            ", ".join("%d %s" % (n, s) for s, n in sorted(statuses.items())), "; ".join(fired) or "none"))
        if NOT_EVALUATED:
            print("- not evaluated (crucible eval refused or failed): %d, e.g. %s" % (
                len(NOT_EVALUATED), NOT_EVALUATED[0]["reason"].strip()[:120]))
        phases = sorted({k for e in every for k in e.get("phase_s", {})})
        if phases:
            print("- median seconds per step: %s" % ", ".join(
                "%s %.2f" % (k, statistics.median(e["phase_s"].get(k, 0) for e in every)) for k in phases))
        needed = [e for e in every if e.get("compiled")]
        print("- compile cache: %d of %d evaluations that needed a compile were hits" % (
            sum(1 for e in needed if e.get("compile_cache_hit")), len(needed)))
    kb_spreads = [spread([b["speedup"] for b in v if "speedup" in b]) for v in base.values()]
    kb_spreads = [s for s in kb_spreads if s == s]
    our_spreads = [spread([e["speedup_raw"] for e in v if e["status"] == "ok"]) for v in ours.values()]
    our_spreads = [s for s in our_spreads if s == s]
    if our_spreads:
        print("- largest spread of 3 repeats: crucible %.1f%%, KernelBench-style %s" % (
            100 * max(our_spreads), ("%.1f%%" % (100 * max(kb_spreads))) if kb_spreads else "-"))
    kb_identity = [b["speedup"] for j, v in base.items() if j.startswith("identity/") for b in v if "speedup" in b]
    if kb_identity:
        print("- identity under the KernelBench-style timing: %.3f to %.3f" % (min(kb_identity), max(kb_identity)))
    print("- checks: %s" % ("all passed" if not failures else "%d failed" % len(failures)))
    for f in failures:
        print("  - FAILED " + f)


if __name__ == "__main__":
    main()
