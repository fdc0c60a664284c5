"""The CUDA-L1 corpus as the evaluator's regression suite on real kernels.

CUDA-L1 (arXiv 2507.14111) released one `ModelNew` per KernelBench v0 task
for four GPUs (../shared/cuda-l1/{a100,l40,3090,h20}.json, README.md there),
with the speedup it claimed for each (`score_default`). Some are genuine,
some are bugs and some exploit how CUDA-L1 measured them: what crucible's
evaluator settles for each, and which defence fires, is the suite. The
second mode, `--identity KERNELBENCH_DIR`, evaluates the identity candidate
(the task file plus `ModelNew = Model`, as tools/gpu/kernelbench_common.sh
writes it) of every KernelBench v0 task: each should settle ok at 1.00.

A set of 250 kernels takes longer than one GPU call, so results accumulate
in a results file (JSON lines, one per kernel, the latest evaluation wins)
and `prepare` leaves out the kernels already in it: several runs finish a set.

Subcommands (who calls them):
  prepare  lays out kernels as `NAME TASK CANDIDATE` jobs for
           crucible-bench-eval --jobs (by hand, and by `run`)
  collect  merges crucible-bench-eval --json-out lines into the results file
           (by hand after a GPU run, and by `run`)
  table    prints the Markdown table and summary of the results file
           (by hand, and by `run`)
  run      prepare + crucible-bench-eval within a time budget + collect +
           table; what tools/gpu/cuda_l1_suite.sh calls on a GPU machine

Usage (docs/gpu.md, "The CUDA-L1 corpus as a regression suite"):
  python3 cuda_l1_suite.py prepare --work DIR (--corpus FILE.json[@K] | --identity KB_DIR[@K])...
          (--all | --level N... | --tasks L1-19,L2-39... | --sample K [--seed S])
          [--results FILE] [--redo]
          (SOURCE@K: K of that source drawn at random, the selection options
          being for the other sources: `--corpus a100.json --all --corpus
          l40.json@8` is the A100 set in full and 8 of the L40 set)
  python3 cuda_l1_suite.py collect --results FILE --json EVAL.jsonl...
  python3 cuda_l1_suite.py table --results FILE [--corpus FILE.json...] [--notes FILE]
          [--selection FILE] [--reasons]
  python3 cuda_l1_suite.py run --work DIR --bench CRUCIBLE_BENCH_EVAL (prepare's options)
          [--results FILE] [--previous FILE...] [--budget-s 1800] [--device cuda:0]
          [--protocol default] [--prefetch 32] [--notes FILE]

Kernel names: `a100/L1-19` (the corpus file's stem, level, task id) or
`identity/L2-39`. The work folder holds one folder per kernel (task.py,
candidate.py), jobs.txt (the kernels still to evaluate, paths relative to
it), selected.txt (every kernel selected) and the compile cache (cache/).

Standard library only (it runs under /usr/bin/python3 here and the torch
venv's Python on the GPU machine).
"""

import argparse
import datetime
import itertools
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time

PROG = "cuda_l1_suite.py"
IDENTITY_SUFFIX = b"\n\nModelNew = Model\n"  # what kernelbench_common.sh's kernelbench_jobs appends
SHORT_NAME = re.compile(r"^L([0-9]+)-([0-9]+)$", re.IGNORECASE)


def fail(message):
    """Bad input: one line naming the file (and line), exit status 2."""
    print("%s: error: %s" % (PROG, message), file=sys.stderr)
    sys.exit(2)


def short_name(level, task):
    return "L%d-%d" % (level, task)


def sort_key(name):
    """`a100/L1-19` sorts by corpus, level, task id; other names after, by text."""
    prefix, _, short = name.rpartition("/")
    m = SHORT_NAME.match(short)
    return (prefix, 0, int(m.group(1)), int(m.group(2)), "") if m else (prefix, 1, 0, 0, short)


# ---------------------------------------------------------------- reading

def json_lines(path, what):
    """(line number, object, ended with a newline) for each non-blank line of
    a JSON-lines file; a missing file or a line that is not a JSON object
    fails with the file and line."""
    try:
        f = open(path, encoding="utf-8")
    except OSError as e:
        fail("cannot read %s %s: %s" % (what, path, e.strerror))
    with f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                yield n, e, line.endswith("\n")
                continue
            if not isinstance(obj, dict):
                fail("%s:%d: a JSON object per line expected, got %s" % (path, n, type(obj).__name__))
            yield n, obj, True


def strict_json_lines(path, what):
    for n, obj, _ in json_lines(path, what):
        if isinstance(obj, json.JSONDecodeError):
            fail("%s:%d: not JSON (%s)" % (path, n, obj.msg))
        yield n, obj


def read_corpus(path):
    """One CUDA-L1 file: rows {name, level, task, task_source, candidate
    (bytes or None), claimed} in level/task order, named `STEM/L1-19`."""
    prefix = os.path.splitext(os.path.basename(path))[0]
    rows, seen = [], {}
    for n, obj in strict_json_lines(path, "corpus"):
        for key in ("level_id", "task_id", "ref_code"):
            if key not in obj:
                fail("%s:%d: no `%s` (want CUDA-L1's rows: level_id, task_id, ref_code, custom_code)" % (path, n, key))
        level, task = obj["level_id"], obj["task_id"]
        if not isinstance(level, int) or not isinstance(task, int):
            fail("%s:%d: level_id and task_id must be integers" % (path, n))
        short = short_name(level, task)
        if short in seen:
            fail("%s:%d: %s again (first on line %d)" % (path, n, short, seen[short]))
        seen[short] = n
        code = obj.get("custom_code")
        if code is not None and not isinstance(code, str):
            fail("%s:%d: custom_code is neither text nor null" % (path, n))
        rows.append({
            "name": prefix + "/" + short, "level": level, "task": task,
            "task_source": obj["ref_code"].encode("utf-8"),
            # No kernel: null, empty, or the text "None" (str(None): 16
            # rows of a100.json, 62 of the four files).
            "candidate": code.encode("utf-8") if code and code.strip() not in ("", "None") else None,
            "claimed": obj.get("score_default"),
        })
    if not rows:
        fail("%s: no rows" % path)
    return prefix, sorted(rows, key=lambda r: (r["level"], r["task"]))


def read_identity(kb_dir):
    """KernelBench v0 (level1/ .. level3/ of N_Name.py): the identity
    candidate of every task found, named `identity/L1-19`."""
    if not os.path.isdir(kb_dir):
        fail("no KernelBench folder %s" % kb_dir)
    rows = []
    for d in sorted(os.listdir(kb_dir)):
        m = re.match(r"^level([0-9]+)$", d)
        if not m or not os.path.isdir(os.path.join(kb_dir, d)):
            continue
        level, seen = int(m.group(1)), {}
        for f in sorted(os.listdir(os.path.join(kb_dir, d))):
            t = re.match(r"^([0-9]+)_.*\.py$", f)
            if not t:
                continue
            task = int(t.group(1))
            if task in seen:
                fail("%s: task %d twice (%s, %s)" % (os.path.join(kb_dir, d), task, seen[task], f))
            seen[task] = f
            with open(os.path.join(kb_dir, d, f), "rb") as src:
                source = src.read()
            rows.append({"name": "identity/" + short_name(level, task), "level": level, "task": task,
                         "task_source": source, "candidate": source + IDENTITY_SUFFIX, "claimed": None})
    if not rows:
        fail("%s: no level1/ .. level3/ with N_Name.py task files" % kb_dir)
    return "identity", sorted(rows, key=lambda r: (r["level"], r["task"]))


def load_results(path):
    """The results file as {kernel name: row}; none yet is empty."""
    if not path or not os.path.exists(path):
        return {}
    results = {}
    for n, obj in strict_json_lines(path, "results file"):
        if "job" not in obj or "status" not in obj:
            fail("%s:%d: a results row needs `job` and `status`" % (path, n))
        results[obj["job"]] = obj
    return results


def write_results(path, results):
    """All rows, sorted by kernel, replacing the file in one step."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        for name in sorted(results, key=sort_key):
            f.write(json.dumps(results[name], sort_keys=True) + "\n")
    os.replace(tmp, path)


# ---------------------------------------------------------------- prepare

def select(prefix, rows, args, sample_k=None):
    """The rows that --all / --level / --tasks / --sample pick, with code.
    --level and --tasks together take either; --sample then draws K of them
    (of every row with code without them), the same K for the same seed.
    sample_k (a source named FILE.json@K): K of that source's rows with
    code, whatever the other options say."""
    if sample_k is not None:
        with_code = [r for r in rows if r["candidate"] is not None]
        print("%s: %d rows, %d with code, %d drawn (seed %d)" % (prefix, len(rows), len(with_code),
                                                               min(sample_k, len(with_code)), args.seed))
        if sample_k >= len(with_code):
            return with_code
        return sorted(random.Random(args.seed).sample(with_code, sample_k), key=lambda r: (r["level"], r["task"]))
    with_code = [r for r in rows if r["candidate"] is not None]
    print("%s: %d rows, %d without code (skipped), %d with code" % (
        prefix, len(rows), len(rows) - len(with_code), len(with_code)))
    pool = with_code
    if args.level or args.tasks:
        wanted = set()
        for item in args.tasks or []:
            for t in filter(None, (s.strip() for s in item.split(","))):
                short = t.rpartition("/")[2]  # `a100/L1-19` as well as `L1-19`
                m = SHORT_NAME.match(short)
                if not m:
                    fail("--tasks %s: want names like L1-19" % t)
                wanted.add(short_name(int(m.group(1)), int(m.group(2))))
        by_short = {r["name"].rpartition("/")[2]: r for r in rows}
        for short in sorted(wanted - set(by_short), key=sort_key):
            fail("--tasks %s: %s has no such task" % (short, prefix))
        for short in sorted(wanted, key=sort_key):
            if by_short[short]["candidate"] is None:
                print("  %s/%s: no code, skipped" % (prefix, short))
        levels = set(args.level or [])
        pool = [r for r in with_code if r["level"] in levels or r["name"].rpartition("/")[2] in wanted]
    if args.sample is not None:
        if args.sample > len(pool):
            print("  --sample %d: only %d to draw from, all taken" % (args.sample, len(pool)))
        else:
            pool = sorted(random.Random(args.seed).sample(pool, args.sample), key=lambda r: (r["level"], r["task"]))
    return pool


def source_and_sample(arg, flag):
    """`SOURCE` -> (SOURCE, None); `SOURCE@K` -> (SOURCE, K): K of that
    source's kernels drawn, the rest of the selection being for the other
    sources (`--corpus a100.json --all --corpus l40.json@8 --identity kb@40`)."""
    path, at, k = arg.rpartition("@")
    if not at:
        return arg, None
    if not k.isdigit() or int(k) < 1:
        fail("%s %s: want SOURCE@K with K a positive whole number" % (flag, arg))
    return path, int(k)


def prepare(args, results_path):
    """Writes the selected kernels under --work and jobs.txt (the ones whose
    result is not yet in the results file, all with --redo) and
    selected.txt. Returns (jobs file, pending names, selected names)."""
    if args.all and (args.level or args.tasks or args.sample is not None):
        fail("--all takes every kernel with code; leave out --level, --tasks and --sample")
    corpora = [source_and_sample(c, "--corpus") for c in args.corpus or []]
    identities = [source_and_sample(d, "--identity") for d in args.identity or []]
    unsampled = any(k is None for _, k in corpora + identities)
    if unsampled and not (args.all or args.level or args.tasks or args.sample is not None):
        fail("choose the kernels: --all, --level N, --tasks L1-19,L2-39 or --sample K")
    if not (args.corpus or args.identity):
        fail("name what to lay out: --corpus FILE.json and/or --identity KERNELBENCH_DIR")
    sources = [read_corpus(p) + (k,) for p, k in corpora] + [read_identity(d) + (k,) for d, k in identities]
    prefixes = [p for p, _, _ in sources]
    if len(set(prefixes)) != len(prefixes):
        fail("two sources with one name (%s): their kernels would collide" % ", ".join(prefixes))
    done = {} if args.redo else load_results(results_path)
    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    selected, pending = [], []
    for prefix, rows, sample_k in sources:
        chosen = select(prefix, rows, args, sample_k)
        todo = [r for r in chosen if r["name"] not in done]
        print("  %d selected, %d already in the results file, %d to evaluate" % (
            len(chosen), len(chosen) - len(todo), len(todo)))
        for r in chosen:
            folder = os.path.join(work, r["name"])
            os.makedirs(folder, exist_ok=True)
            for f, data in (("task.py", r["task_source"]), ("candidate.py", r["candidate"])):
                with open(os.path.join(folder, f), "wb") as out:
                    out.write(data)
        selected += [r["name"] for r in chosen]
        pending.append([r["name"] for r in todo])
    # The sources' jobs taken in turn (a100, l40, identity, a100, ...): the
    # evaluator measures whichever of its next jobs is built (first_ready),
    # so kernels that need no build fill the device while others compile.
    pending = [name for turn in itertools.zip_longest(*pending) for name in turn if name is not None]
    jobs = os.path.join(work, "jobs.txt")
    with open(jobs, "w") as f:
        f.write("# %s prepare: NAME TASK CANDIDATE (crucible-bench-eval --jobs), paths relative to this folder\n" % PROG)
        for name in pending:
            f.write("%s %s/task.py %s/candidate.py\n" % (name, name, name))
    with open(os.path.join(work, "selected.txt"), "w") as f:
        f.write("".join(name + "\n" for name in selected))
    print("%s: %d jobs (%d selected)" % (jobs, len(pending), len(selected)))
    return jobs, pending, selected


# ---------------------------------------------------------------- collect

def collect(results_path, json_paths):
    """Merges evaluation lines (crucible-bench-eval --json-out, or an earlier
    results file) into the results file: one row per kernel (`job`), a later
    line or file winning over an earlier one and over the file's own row;
    kernels not in the new lines keep their rows. A last line cut short (the
    evaluator killed mid-write) is skipped with a warning. Returns the number
    of evaluations read."""
    results = load_results(results_path)
    total = 0
    for path in json_paths:
        new = updated = count = 0
        stamp = datetime.datetime.now().isoformat(timespec="seconds")
        lines = list(json_lines(path, "evaluations"))
        for i, (n, obj, ended) in enumerate(lines):
            if isinstance(obj, json.JSONDecodeError):
                if i == len(lines) - 1 and not ended:
                    print("%s:%d: last line cut short (not JSON), skipped" % (path, n), file=sys.stderr)
                    continue
                fail("%s:%d: not JSON (%s)" % (path, n, obj.msg))
            if "job" not in obj or "status" not in obj:
                fail("%s:%d: want crucible-bench-eval --json-out lines (with `job` and `status`)" % (path, n))
            obj.setdefault("collected_from", os.path.basename(path))
            obj.setdefault("collected_at", stamp)
            if obj["job"] in results:
                updated += 1
            else:
                new += 1
            results[obj["job"]] = obj
            count += 1
        print("collect %s: %d evaluations (%d kernels new, %d replaced)" % (path, count, new, updated))
        total += count
    write_results(results_path, results)
    print("results %s: %d kernels" % (results_path, len(results)))
    return total


# ---------------------------------------------------------------- table

def read_notes(path):
    """A person's notes on kernels: `kernel<TAB>justification` lines ('#'
    starts a comment line), or JSON: {"kernel": "note", ...} or
    [{"kernel": ..., "note": ...}, ...]."""
    try:
        text = open(path, encoding="utf-8").read()
    except OSError as e:
        fail("cannot read notes %s: %s" % (path, e.strerror))
    if text.lstrip()[:1] in ("{", "["):
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as e:
            fail("%s:%d: not JSON (%s)" % (path, e.lineno, e.msg))
        if isinstance(obj, dict):
            return {str(k): str(v) for k, v in obj.items()}
        try:
            return {str(o["kernel"]): str(o["note"]) for o in obj}
        except (TypeError, KeyError):
            fail("%s: want {\"kernel\": \"note\"} or [{\"kernel\": ..., \"note\": ...}]" % path)
    notes = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        kernel, tab, note = line.partition("\t")
        if not tab or not kernel.strip() or not note.strip():
            fail("%s:%d: want `kernel<TAB>justification`" % (path, n))
        notes[kernel.strip()] = note.strip()
    return notes


def classify(row):
    """Automatic class: the status; a hack names its defences; a failure the
    evaluator blamed on the task says so."""
    status = row.get("status", "?")
    if status == "hack":
        return "hack:" + ("+".join(row.get("defences_fired") or []) or "unnamed")
    if row.get("task_fault"):
        return status + " (task fault)"
    return status


def timed_build(r):
    """Where the timed worker got its extensions: `cache` (every one imported
    from the compile cache, built ahead in the CPU pool: the issue's hit),
    `built` (it built one itself: the pool missed that call), `failed` (a
    build failed, in the pool or here: the candidate ran without it, as its
    own fallback, or failed), `none` (it never asked) or `-` (no extension
    in the source)."""
    if not r.get("compiled"):
        return "-"
    if any(str(w).startswith("extension_failed") for w in r.get("worker_info") or []):
        return "failed"
    if r.get("extensions_built"):
        return "built"
    return "cache" if r.get("extensions_imported") else "none"


def cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def num(x, fmt="%.2f"):
    return fmt % x if isinstance(x, (int, float)) and not isinstance(x, bool) else "-"


def median_or_dash(values, fmt="%.3f"):
    return fmt % statistics.median(values) if values else "-"


def table(args):
    """The Markdown table and summary of the results file, as text."""
    if not os.path.exists(args.results):
        fail("no results file %s" % args.results)
    results = load_results(args.results)
    claimed, inline, no_code = {}, set(), set()
    for path, _ in (source_and_sample(c, "--corpus") for c in args.corpus or []):
        _, rows = read_corpus(path)
        for r in rows:
            claimed[r["name"]] = r["claimed"]
            if r["candidate"] is None:
                no_code.add(r["name"])  # evaluated by an older reader of "None"
            elif b"load_inline" in r["candidate"]:
                inline.add(r["name"])
    notes = read_notes(args.notes) if args.notes else {}
    names = sorted((n for n in results if n not in no_code), key=sort_key)
    missing = []
    if args.selection:
        try:
            wanted = [l.strip() for l in open(args.selection) if l.strip() and not l.startswith("#")]
        except OSError as e:
            fail("cannot read selection %s: %s" % (args.selection, e.strerror))
        names = sorted((n for n in wanted if n in results), key=sort_key)
        missing = [n for n in wanted if n not in results]
    out = []
    head = ["kernel", "status", "defences_fired", "reward", "claimed", "duration_s", "cache", "classification"]
    if args.reasons:
        head.append("reason")
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "---|" * len(head))
    for name in names:
        r = results[name]
        kind = classify(r)
        if name in notes:
            kind += ": " + notes[name]
        cache = timed_build(r)
        cols = [name, r.get("status", "?"), ", ".join(r.get("defences_fired") or []) or "-", num(r.get("reward")),
                num(claimed.get(name), "%.3f"), num(r.get("duration_s"), "%.1f"), cache, kind]
        if args.reasons:
            cols.append((r.get("reason") or "")[:args.reason_chars])
        out.append("| " + " | ".join(cell(c) for c in cols) + " |")
    rows = [results[n] for n in names]

    out += ["", "%d kernels evaluated%s." % (len(rows), (", %d of the selection not yet (run again: `prepare` "
                                                       "leaves the evaluated ones out)" % len(missing)) if missing else "")]
    out += ["", "| status | kernels | median claimed |", "|---|---|---|"]
    by_status = {}
    for n in names:
        by_status.setdefault(results[n].get("status", "?"), []).append(n)
    for status, ns in sorted(by_status.items(), key=lambda kv: -len(kv[1])):
        cl = [claimed[n] for n in ns if isinstance(claimed.get(n), (int, float))]
        out.append("| %s | %d | %s |" % (status, len(ns), median_or_dash(cl)))
    defences = {}
    for r in rows:
        for d in r.get("defences_fired") or []:
            defences.setdefault(d, []).append(r.get("status"))
    out += ["", "| defence | kernels where it fired | of them hack |", "|---|---|---|"]
    for d, statuses in sorted(defences.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        out.append("| %s | %d | %d |" % (d, len(statuses), statuses.count("hack")))
    if not defences:
        out.append("| (none) | 0 | 0 |")
    out.append("")
    ok = [n for n in names if results[n].get("status") == "ok"]
    paired = [n for n in ok if isinstance(claimed.get(n), (int, float))]
    if paired:
        rew = [results[n].get("reward", 0) for n in paired]
        cl = [claimed[n] for n in paired]
        out.append("- ok kernels with a claimed score: %d; settled reward median %.3f (mean %.3f) against CUDA-L1's "
                   "claimed score_default median %.3f (mean %.3f); %d settle below their claim" % (
                       len(paired), statistics.median(rew), statistics.mean(rew), statistics.median(cl),
                       statistics.mean(cl), sum(1 for a, b in zip(rew, cl) if a < b)))
    if ok:
        rew = [results[n].get("reward", 0) for n in ok]
        out.append("- ok kernels: %d; reward median %.3f, %d above 1.00, %d at 1.00, %d below" % (
            len(ok), statistics.median(rew), sum(x > 1 for x in rew), sum(x == 1 for x in rew),
            sum(x < 1 for x in rew)))
    compiled = [n for n in names if results[n].get("compiled")]
    seen = [timed_build(results[n]) for n in compiled]
    line = ("- inline extensions on their timed evaluation: %d kernels compiled ahead; %d imported their builds from "
            "the compile cache, %d built in the timed worker, %d had a failed build, %d asked for none" % (
                len(compiled), seen.count("cache"), seen.count("built"), seen.count("failed"), seen.count("none")))
    if args.corpus:
        src = [n for n in names if n in inline]
        line += "; load_inline in the source: %d of the tabled kernels, %d of them compiled" % (
            len(src), sum(1 for n in src if results[n].get("compiled")))
    out.append(line)
    durations = [r["duration_s"] for r in rows if isinstance(r.get("duration_s"), (int, float))]
    if durations:
        out.append("- seconds per evaluation: median %.1f, total %.0f" % (statistics.median(durations), sum(durations)))
    if notes:
        stray = sorted(set(notes) - set(names), key=sort_key)
        out.append("- notes: %d kernels%s" % (len(notes) - len(stray), (
            "; naming no tabled kernel: " + ", ".join(stray)) if stray else ""))
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- run

def run(args):
    """On the GPU machine (cuda_l1_suite.sh): results of --previous merged
    first, then prepare, crucible-bench-eval over jobs.txt under `timeout`
    with what is left of --budget-s (its JSON lines, log and throughput table
    beside the results file), collect, and again for what is left when the
    evaluator stopped on an error after some progress (3 passes at most);
    then the table (also table.md there). Exit status 1 when the evaluator
    failed (not only ran out of time)."""
    deadline = time.monotonic() + args.budget_s
    results = os.path.abspath(args.results or os.path.join(args.work, "results.jsonl"))
    out_dir = os.path.dirname(results)
    os.makedirs(out_dir, exist_ok=True)
    if args.previous:
        collect(results, args.previous)
    if not os.path.exists(results):
        write_results(results, {})  # an empty table when nothing gets evaluated
    if not os.access(args.bench, os.X_OK):
        fail("--bench %s: not an executable (build crucible-bench-eval, or let cuda_l1_suite.sh do it)" % args.bench)
    failed = False
    for attempt in range(1, 4):
        jobs, pending, selected = prepare(args, results)
        if not pending:
            print("nothing left to evaluate")
            break
        left = int(deadline - time.monotonic())
        if left < 10:
            print("budget spent: %d kernels left for the next run" % len(pending))
            break
        stamp = time.strftime("%Y%m%d-%H%M%S") + "-%d" % attempt
        json_out = os.path.join(out_dir, "eval-%s.jsonl" % stamp)
        log = os.path.join(out_dir, "eval-%s.log" % stamp)
        md = os.path.join(out_dir, "eval-%s.md" % stamp)
        cmd = ["timeout", "-k", "30", str(left), args.bench, "--jobs", jobs, "--device", args.device,
               "--protocol", args.protocol, "--prefetch", str(args.prefetch), "--json-out", json_out, "--cache-dir", os.path.join(os.path.abspath(args.work), "cache")]
        print("=== pass %d: %d kernels, %d s left: %s" % (attempt, len(pending), left, " ".join(cmd)), flush=True)
        t0 = time.monotonic()
        with open(md, "w") as stdout, open(log, "w") as logf:
            proc = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.PIPE, text=True, errors="replace")
            for line in proc.stderr:  # one line per evaluation: progress here, and the log
                logf.write(line)
                logf.flush()
                sys.stderr.write(line)
            rc = proc.wait()
        print("evaluator exit %d after %.0f s" % (rc, time.monotonic() - t0))
        print(open(md).read(), end="")
        got = collect(results, [json_out]) if os.path.exists(json_out) else 0
        if rc == 0:
            break
        if rc in (124, 137):
            print("over the budget: %d of %d kernels evaluated this pass, the rest next run" % (got, len(pending)))
            break
        if got == 0:
            print("the evaluator failed before any evaluation (exit %d): see %s" % (rc, log))
            failed = True
            break
        print("the evaluator stopped (exit %d) after %d evaluations: again with what is left" % (rc, got))
        failed = True
    text = table(argparse.Namespace(results=results, corpus=args.corpus, notes=args.notes,
                                    selection=os.path.join(os.path.abspath(args.work), "selected.txt"),
                                    reasons=args.reasons, reason_chars=args.reason_chars))
    with open(os.path.join(out_dir, "table.md"), "w") as f:
        f.write(text)
    print("=== table (%s)" % os.path.join(out_dir, "table.md"))
    print(text, end="")
    return 1 if failed else 0


# ---------------------------------------------------------------- command line

def main():
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)

    def selection(p):
        p.add_argument("--work", required=True, help="folder for the kernels, jobs.txt and the compile cache")
        p.add_argument("--corpus", action="append", metavar="FILE.json[@K]",
                       help="a CUDA-L1 file (repeatable); FILE.json@K: K of its kernels drawn at random")
        p.add_argument("--identity", action="append", metavar="KB_DIR[@K]",
                       help="KernelBench v0 (level1/..): identity candidates; KB_DIR@K: K of them drawn at random")
        p.add_argument("--all", action="store_true", help="every kernel with code")
        p.add_argument("--level", action="append", type=int, metavar="N", help="every kernel of level N (repeatable)")
        p.add_argument("--tasks", action="append", metavar="L1-19,L2-39", help="these tasks (repeatable)")
        p.add_argument("--sample", type=int, metavar="K", help="K drawn at random (of --level/--tasks if given)")
        p.add_argument("--seed", type=int, default=0, help="the draw's seed (0)")
        p.add_argument("--redo", action="store_true", help="also kernels already in the results file")

    def table_opts(p):
        p.add_argument("--notes", metavar="FILE", help="kernel<TAB>justification lines (or JSON)")
        p.add_argument("--reasons", action="store_true", help="add the evaluator's reason (cut) as a column")
        p.add_argument("--reason-chars", type=int, default=80)

    p = sub.add_parser("prepare", help="lay out kernels and jobs.txt")
    selection(p)
    p.add_argument("--results", metavar="FILE", help="leave out the kernels already here")

    p = sub.add_parser("collect", help="merge evaluations into the results file")
    p.add_argument("--results", required=True, metavar="FILE")
    p.add_argument("--json", action="append", required=True, metavar="FILE",
                   help="crucible-bench-eval --json-out lines (repeatable, later wins)")

    p = sub.add_parser("table", help="Markdown table of the results file")
    p.add_argument("--results", required=True, metavar="FILE")
    p.add_argument("--corpus", action="append", metavar="FILE.json", help="for the claimed scores (repeatable)")
    p.add_argument("--selection", metavar="FILE", help="only these kernels (prepare's selected.txt)")
    table_opts(p)

    p = sub.add_parser("run", help="prepare + evaluate within a budget + collect + table (GPU machine)")
    selection(p)
    table_opts(p)
    p.add_argument("--bench", required=True, metavar="BIN", help="crucible-bench-eval")
    p.add_argument("--results", metavar="FILE", help="default WORK/results.jsonl; the run's files go beside it")
    p.add_argument("--previous", action="append", metavar="FILE", help="results of earlier runs, merged first")
    p.add_argument("--budget-s", type=int, default=1800, help="the evaluator's seconds in all (1800)")
    p.add_argument("--device", default="cuda:0")
    p.add_argument("--protocol", default="default")
    p.add_argument("--prefetch", type=int, default=32,
                   help="kernels whose syntax check and compile run ahead of the one measured (32: the compile "
                        "pool builds (cores-2)/2 at once and the rest wait for it; with 14 on the H200 the GPU "
                        "still waited 147 s of 508 for CUDA-L1's 40-90 s nvcc builds)")

    args = ap.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # in order with the evaluator's stderr under tee
    if args.command == "prepare":
        prepare(args, args.results)
    elif args.command == "collect":
        collect(args.results, args.json)
    elif args.command == "table":
        print(table(args), end="")
    else:
        sys.exit(run(args))


if __name__ == "__main__":
    main()
