#!/usr/bin/env python3
"""The figures of tools/gpu/stage3_kernelbench.sh's runs, one per max_staleness.

For each STALENESS it reads WORK/run-STALENESS (summary.json,
settlements.jsonl, metrics.jsonl: the learner's versions), the nvidia-smi
samples WORK/util-STALENESS.txt ("UNIX_TIME UTIL..." lines, none on CPU),
the run's last Prometheus scrape WORK/metrics-STALENESS.txt, the stage 3
start WORK/stage3-STALENESS.start and the exported kernels
WORK/kernels-STALENESS.jsonl, and prints Markdown: candidates settled per
GPU-hour, busy fraction (nvidia-smi, and summary.json's
evaluator_busy_fraction: the evaluators' own busy seconds over stage 3), statuses, defences fired, the staleness of the trained groups,
groups per hour, and the ratio of the first run's groups per hour to the
last's (asynchronous over synchronous when STALENESS is "4 0").

    tools/gpu/stage3_table.py --work /tmp/crucible-stage3 --devices cuda:0 4 0
"""
import argparse
import json
import pathlib
import re

METRIC = re.compile(r'^(crucible_evaluator_[a-z_]+)(?:\{([^}]*)\})? ([0-9.eE+-]+)$')


def jsonl(path):
    if not path.is_file():
        return []
    return [json.loads(l) for l in path.read_text().splitlines() if l.strip()]


def scrape(path):
    """{(metric, labels): value} of the evaluator's families."""
    out = {}
    if path.is_file():
        for line in path.read_text().splitlines():
            m = METRIC.match(line)
            if m:
                out[(m.group(1), m.group(2) or "")] = out.get((m.group(1), m.group(2) or ""), 0) + float(m.group(3))
    return out


def label(labels, name):
    m = re.search(name + r'="([^"]*)"', labels)
    return m.group(1) if m else ""


def figures(work, staleness, devices):
    run = work / f"run-{staleness}"
    summary = json.loads((run / "summary.json").read_text())
    rows = jsonl(run / "settlements.jsonl")
    elapsed = summary["elapsed_s"]
    gpus = 1 if devices == ["cpu"] else len(devices)
    start = work / f"stage3-{staleness}.start"
    t0 = float(start.read_text()) if start.is_file() else 0.0
    util = []
    util_file = work / f"util-{staleness}.txt"
    if util_file.is_file():
        for line in util_file.read_text().splitlines():
            parts = line.split()
            if len(parts) > 1 and t0 <= float(parts[0]) <= t0 + elapsed:
                util.append(sum(map(float, parts[1:])) / (len(parts) - 1))
    metrics = scrape(work / f"metrics-{staleness}.txt")
    defences = {}
    for (k, labels), v in metrics.items():
        if k == "crucible_evaluator_defences_fired_total" and v:
            defences[label(labels, "defence")] = defences.get(label(labels, "defence"), 0) + int(v)
    statuses = {}
    for r in rows:
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    stale = {}
    for step in jsonl(run / "metrics.jsonl"):
        for age, n in step.get("staleness", {}).items():
            stale[int(age)] = stale.get(int(age), 0) + n
    kernels = jsonl(work / f"kernels-{staleness}.jsonl")
    evaluated = [r for r in rows if r["status"] != "NoCode"]
    hours = elapsed / 3600
    return {
        "staleness": staleness, "elapsed": elapsed, "groups": summary["groups"], "settled": len(rows),
        "evaluated": len(evaluated), "per_gpu_hour": len(rows) / (hours * gpus) if hours else 0,
        "evaluated_per_gpu_hour": len(evaluated) / (hours * gpus) if hours else 0,
        "busy_smi": sum(util) / len(util) / 100 if util else None, "smi_samples": len(util),
        # The evaluators' busy seconds over evaluators x stage 3's seconds (crucible run's own figure).
        "busy_evaluator": summary.get("evaluator_busy_fraction"),
        "statuses": statuses, "defences": defences, "staleness_groups": stale,
        "groups_per_hour": summary["groups"] / hours if hours else 0, "versions": summary.get("versions", 0),
        "kernels": kernels, "first": summary["first_fifth"], "last": summary["last_fifth"],
    }


def spread(d):
    return ", ".join(f"{k} {v}" for k, v in sorted(d.items())) or "none"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", required=True)
    ap.add_argument("--devices", default="cuda:0", help="the evaluators' devices, comma-separated, or cpu")
    ap.add_argument("staleness", nargs="+")
    a = ap.parse_args()
    runs = [figures(pathlib.Path(a.work), s, a.devices.split(",")) for s in a.staleness]
    fmt = lambda x: "n/a" if x is None else f"{x:.3f}"
    print("| max_staleness | stage 3 s | groups | groups/hour | candidates settled | per GPU-hour | evaluated (not NoCode) "
          "| per GPU-hour | GPU busy (nvidia-smi) | evaluator busy | learner versions | first fifth reward, success "
          "| last fifth |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in runs:
        f, l = r["first"], r["last"]
        print(f"| {r['staleness']} | {r['elapsed']:.0f} | {r['groups']} | {r['groups_per_hour']:.1f} | {r['settled']} "
              f"| {r['per_gpu_hour']:.0f} | {r['evaluated']} | {r['evaluated_per_gpu_hour']:.0f} "
              f"| {fmt(r['busy_smi'])} ({r['smi_samples']} samples) | {fmt(r['busy_evaluator'])} | {r['versions']} "
              f"| {f['mean_reward']:.3f}, {f['success_rate']:.3f} | {l['mean_reward']:.3f}, {l['success_rate']:.3f} |")
    print()
    for r in runs:
        print(f"max_staleness {r['staleness']}:")
        print(f"  statuses: {spread(r['statuses'])}")
        print(f"  defences fired: {spread(r['defences'])}")
        print(f"  staleness of the trained groups (versions behind: groups): {spread(r['staleness_groups'])}")
        best = sorted(r["kernels"], key=lambda k: -k.get("score_default", 0))
        print(f"  kernels found (crucible kernels export): {len(best)}"
              + "".join(f"\n    {k['task']}: {k['score_default']:.2f}{' verified' if k.get('verified') else ''}"
                        for k in best[:10]))
    if len(runs) >= 2 and runs[-1]["groups_per_hour"]:
        print(f"\ngroups per hour, max_staleness {runs[0]['staleness']} over {runs[-1]['staleness']}: "
              f"{runs[0]['groups_per_hour'] / runs[-1]['groups_per_hour']:.2f}x")


if __name__ == "__main__":
    main()
