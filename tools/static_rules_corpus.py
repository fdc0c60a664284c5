"""What the static detector's rules flag on real kernels: CUDA-L1's released
files (../shared/cuda-l1/*.json, read from the path given, never copied),
rule by rule, and, with the evaluator's results for the same kernels
(tools/gpu/cuda_l1_suite.py's results.jsonl), how many of the kernels the
evaluator settled ok each rule would have settled hack as a required
detector (the referee settles a required detector's hack verdict as hack).

Usage: python3 tools/static_rules_corpus.py CORPUS.json [--rules configs/detectors/static.toml]
                                              [--results results.jsonl]
Who calls it: by hand, for docs/defences.md and docs/benchmarks.md. The rules
are applied with Python's re, whose syntax agrees with the ECMAScript
patterns the detector compiles for every construct the shipped rules use
(classes, alternation, lookahead); multiline as the detector's.
"""

import argparse
import collections
import os
import re
import sys
import tomllib

# The corpus and results readers of the suite (which rows have code, errors
# naming file and line), not a second copy of them.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "gpu"))
from cuda_l1_suite import load_results, read_corpus  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus")
    ap.add_argument("--rules", default=os.path.join(os.path.dirname(__file__), "..", "configs/detectors/static.toml"))
    ap.add_argument("--results", help="cuda_l1_suite.py results.jsonl (statuses of the same kernels)")
    args = ap.parse_args()
    try:
        rules = tomllib.load(open(args.rules, "rb"))["rule"]
    except (OSError, tomllib.TOMLDecodeError, KeyError) as e:
        sys.exit("static_rules_corpus.py: %s: %s" % (args.rules, e))
    compiled = [(r["name"], r["verdict"], re.compile(r["pattern"], re.M)) for r in rules]
    status = {name: row.get("status") for name, row in load_results(args.results).items()}
    fired, fired_ok = collections.Counter(), collections.Counter()
    kernels = flagged = ok = ok_flagged = 0
    for row in read_corpus(args.corpus)[1]:
        if row["candidate"] is None:
            continue  # CUDA-L1 released no kernel for this task
        code = row["candidate"].decode("utf-8")
        kernels += 1
        hacks = [rule for rule, verdict, p in compiled if verdict == "hack" and p.search(code)]
        fired.update(hacks)
        flagged += bool(hacks)
        if status.get(row["name"]) == "ok":
            ok += 1
            ok_flagged += bool(hacks)
            fired_ok.update(hacks)
    print("%s: %d kernels with code; %d flagged hack by a rule" % (args.corpus, kernels, flagged))
    if status:
        print("evaluated ok here: %d; of them flagged hack: %d" % (ok, ok_flagged))
    print("| rule | kernels flagged hack | of them evaluated ok |\n|---|---|---|")
    for rule, _, _ in compiled:
        if fired[rule]:
            print("| %s | %d | %s |" % (rule, fired[rule], fired_ok[rule] if status else "-"))


if __name__ == "__main__":
    main()
