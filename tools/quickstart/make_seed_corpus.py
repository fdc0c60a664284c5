#!/usr/bin/python3
"""Writes the quick-start's seed corpus for stage 1 (SFT): JSON Lines of
{"prompt", "completion", "task", "variant"}, one line per task of a task set
and per candidate variant written for it (configs/tasks/cpu/TASK/VARIANT.py).

Each (task, variant) appears once with the prompt a rollout sends before
the exemplar store holds anything ("Previous codes: (none)") and once with
each pair of the task's correct variants as previous codes with their scores,
as the store serves them later in stage 3 (scored by `crucible eval
--protocol quick` once per run of this script, on --devices: the quick-start
scores on the CPU, tools/gpu/loop_kernelbench.sh on its GPUs). Every prompt is followed by
every variant alike: were the completion tied to the exemplars shown (the
faster variant only when it is not among them), the policy would turn worse
as stage 3's store fills with fast codes, whatever it learned. Prompts are
rendered by `crucible rollout --print-prompt [--exemplar SCORE:FILE]`, so
the C++ renderer and the template in --config decide them. The completion follows the generation
protocol: ## Performance Analysis, ## Algorithm Design (the variant's
docstring), ## Code Implementation with the variant's code. Correct and
incorrect variants are both included, so the SFT policy starts with a mix
that GRPO's measured rewards can sort out.

    tools/quickstart/make_seed_corpus.py --crucible build/bin/crucible --config configs/quickstart/rollout.toml \
        --only gelu_tanh,layernorm_manual,scale_relu,softmax_manual --out configs/quickstart/seed.jsonl

With --verified, the corpus is instead stage 1 as the paper makes it
(CUDA-L1, arXiv 2507.14111, section 3.1): kernels other models wrote, kept
only when this project's evaluator settled them `ok`. Each --verified file is
an evaluator's results file (JSON Lines of job, status, reward: what
tools/gpu/cuda_l1_suite.py collects, e.g. docs/results/cuda_l1_a100_h200.jsonl;
a later file's row wins for the same job). Job `STEM/L1-19` is the kernel of
row level_id 1, task_id 19 of --cuda-l1 DIR/STEM.json (CUDA-L1's release);
`identity/L1-19` is KernelBench's reference as its own ModelNew (the task
file plus `ModelNew = Model`). The task id is the KernelBench file under
--kernelbench (level1/19_ReLU), which must be the reference the kernel was
measured against (CUDA-L1's ref_code). Each kept kernel appears with the
prompt without previous codes and with every one and every pair of its
task's kept kernels as previous codes, scored with their settled rewards
(what the exemplar store seeded from the same results serves in stage 3).
Rows not `ok` are skipped and counted by status, as are rows of other
levels and rows whose kernel cannot be found; a summary is printed.

    tools/quickstart/make_seed_corpus.py --crucible build/bin/crucible --config configs/h200.toml \
        --verified docs/results/cuda_l1_a100_h200.jsonl --verified docs/results/cuda_l1_samples_h200.jsonl \
        --cuda-l1 .cl1 --kernelbench .kb --levels 1,2 --out /tmp/sft.jsonl
"""
import argparse
import ast
import concurrent.futures
import itertools
import json
import pathlib
import re
import subprocess
import sys
import tempfile

DEFAULT_VARIANTS = ["faster", "equal", "slower", "incorrect", "not_compiling"]
CORRECT = ["faster", "equal", "slower"]  # what the exemplar store can hold


def score(crucible, task_dir, variant, device, protocol):
    """The variant's speedup on device, rounded as the referee rounds rewards."""
    out = subprocess.run([crucible, "eval", "--task", str(task_dir / "task.py"), "--candidate",
                          str(task_dir / f"{variant}.py"), "--protocol", protocol, "--device", device, "--seed", "1",
                          "--json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out[out.index("{"):])["reward"]


def score_all(crucible, task_dirs, devices, protocol):
    """{task_dir: {variant: score}} for every correct variant, one evaluation
    per device at a time (an evaluator wants its device to itself)."""
    jobs = [(t, v) for t in task_dirs for v in CORRECT if (t / f"{v}.py").is_file()]
    free = list(devices)

    def run(job):
        device = free.pop()
        try:
            return job, score(crucible, *job, device, protocol)
        finally:
            free.append(device)

    scores = {t: {} for t in task_dirs}
    with concurrent.futures.ThreadPoolExecutor(len(devices)) as pool:
        for (t, v), s in pool.map(run, jobs):
            scores[t][v] = s
    return scores


def docstring(code, cls="ModelNew"):
    """The first line of class cls's docstring (or the file's), else ''."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return ""
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == cls:
            doc = ast.get_docstring(node)
            if doc:
                return doc.splitlines()[0]
    doc = ast.get_docstring(tree)
    return doc.splitlines()[0] if doc else ""


def completion(task_doc, variant_code):
    design = docstring(variant_code) or "Keep the reference's algorithm."
    return ("## Performance Analysis\n"
            f"The reference computes {task_doc[0].lower() + task_doc[1:] if task_doc else 'its result'}\n"
            "## Algorithm Design\n"
            f"{design}\n"
            "## Code Implementation\n"
            f"```python\n{variant_code.rstrip()}\n```\n")


IDENTITY_SUFFIX = "\n\nModelNew = Model\n"  # tools/gpu/cuda_l1_suite.py's identity candidate
JOB = re.compile(r"^([^/]+)/L([0-9]+)-([0-9]+)$")


def results_rows(paths):
    """{job: row} of evaluator results files (JSON Lines with job, status,
    reward); a later file's row wins. Bad input exits naming file and line."""
    rows = {}
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as e:
                    sys.exit(f"{path}:{n}: not JSON ({e.msg})")
                if not isinstance(row, dict) or not isinstance(row.get("job"), str) or "status" not in row:
                    sys.exit(f"{path}:{n}: a results row needs `job` and `status`")
                if row["status"] == "ok" and not isinstance(row.get("reward"), (int, float)):
                    sys.exit(f"{path}:{n}: an ok row needs a numeric `reward`")
                rows[row["job"]] = row
    return rows


def kernelbench_file(kb, level, task):
    """KB/levelL/T_Name.py, or None."""
    hits = sorted((kb / f"level{level}").glob(f"{task}_*.py"))
    return hits[0] if len(hits) == 1 else None


def cuda_l1_rows(cuda_l1, stem, cache):
    """{(level, task): row} of CUDA-L1's DIR/STEM.json, read once; {} when absent."""
    if stem not in cache:
        cache[stem] = {}
        path = cuda_l1 / f"{stem}.json" if cuda_l1 else None
        if path and path.is_file():
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    row = json.loads(line)
                    cache[stem][(int(row["level_id"]), int(row["task_id"]))] = row
    return cache[stem]


def verified_kernels(a):
    """([(task id, task file, job, code, reward)], {reason: count}): the
    kernels the results settled ok, and why each other row was left out."""
    rows = results_rows(a.verified)
    kb, cuda_l1 = pathlib.Path(a.kernelbench), pathlib.Path(a.cuda_l1) if a.cuda_l1 else None
    levels = {int(x) for x in a.levels.split(",") if x}
    kept, skipped, corpora = [], {}, {}

    def skip(reason):
        skipped[reason] = skipped.get(reason, 0) + 1

    for job, row in sorted(rows.items()):
        if row["status"] != "ok":
            skip(f"status {row['status']}")
            continue
        m = JOB.match(job)
        if not m:
            skip("job name not SOURCE/L<level>-<task>")
            continue
        stem, level, task = m.group(1), int(m.group(2)), int(m.group(3))
        if levels and level not in levels:
            skip("other level")
            continue
        task_file = kernelbench_file(kb, level, task)
        if task_file is None:
            skip("no KernelBench task file")
            continue
        reference = task_file.read_text(encoding="utf-8")
        if stem == "identity":
            code = reference + IDENTITY_SUFFIX
        else:
            released = cuda_l1_rows(cuda_l1, stem, corpora).get((level, task))
            if released is None:
                skip("no CUDA-L1 row")
                continue
            code = released.get("custom_code")
            if not isinstance(code, str) or code.strip() in ("", "None"):
                skip("no CUDA-L1 code")
                continue
            if released.get("ref_code") != reference:
                skip("CUDA-L1's reference differs from KernelBench's")
                continue
        kept.append((f"level{level}/{task_file.stem}", task_file, job, code, float(row["reward"])))
    return kept, skipped


def verified_corpus(a):
    """The --verified corpus's lines (module docstring) and a summary."""
    kept, skipped = verified_kernels(a)
    by_task = {}
    for k in kept:
        by_task.setdefault(k[0], []).append(k)
    base = [a.crucible, "rollout"] + (["--config", a.config] if a.config else [])
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for task_id, _, job, code, _ in kept:
            files[job] = pathlib.Path(tmp) / (job.replace("/", "_") + ".py")
            files[job].write_text(code, encoding="utf-8")

        def prompt(task_id, shown):
            cmd = base + ["--print-prompt", task_id] + [f"--exemplar={k[4]}:{files[k[2]]}" for k in shown]
            return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout

        jobs = []
        for task_id, kernels in sorted(by_task.items()):
            best_first = sorted(kernels, key=lambda k: (-k[4], k[2]))
            sets = [()] + [(k,) for k in best_first] + list(itertools.combinations(best_first, 2))
            jobs += [(task_id, shown) for shown in sets]
        with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
            prompts = dict(zip(jobs, pool.map(lambda j: prompt(*j), jobs)))
        for task_id, kernels in sorted(by_task.items()):
            task_doc = docstring(kernels[0][1].read_text(encoding="utf-8"), "Model")
            for _, _, job, code, reward in kernels:
                done = completion(task_doc, code)
                for (t, shown), text in prompts.items():
                    if t == task_id:
                        lines.append({"prompt": text, "completion": done, "task": task_id, "variant": job,
                                      "reward": reward, "exemplars": [{"variant": k[2], "score": k[4]} for k in shown]})
    summary = {"results_rows": len(kept) + sum(skipped.values()), "kept": len(kept), "tasks": len(by_task),
               "examples": len(lines), "skipped": dict(sorted(skipped.items()))}
    return lines, summary


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--crucible", default="build/bin/crucible", help="the crucible binary")
    ap.add_argument("--config", default="", help="config whose [rollout] decides the prompt (template, platform, tasks_dir)")
    ap.add_argument("--tasks", default="configs/tasks/cpu", help="folder of task folders (configs/tasks/cpu)")
    ap.add_argument("--prefix", default="cpu", help="task id prefix (cpu)")
    ap.add_argument("--variants", default=",".join(DEFAULT_VARIANTS), help="comma-separated variant names")
    ap.add_argument("--only", default="", help="comma-separated task folder names (default: every one)")
    ap.add_argument("--devices", default="cpu", help="comma-separated devices to score on (cpu)")
    ap.add_argument("--protocol", default="quick", help="the scoring protocol (quick)")
    ap.add_argument("--out", required=True, help="JSON Lines file to write")
    ap.add_argument("--verified", action="append", default=[],
                    help="stage 1 from the evaluator's results instead (repeatable; see the module's help)")
    ap.add_argument("--cuda-l1", default="", help="--verified: folder of CUDA-L1's STEM.json files")
    ap.add_argument("--kernelbench", default="", help="--verified: KernelBench folder (level1/, level2/, ...)")
    ap.add_argument("--levels", default="", help="--verified: comma-separated levels to keep (default: all)")
    ap.add_argument("--jobs", type=int, default=4, help="--verified: prompts rendered at once (4)")
    a = ap.parse_args()
    if a.verified:
        if not a.kernelbench:
            ap.error("--verified needs --kernelbench")
        lines, summary = verified_corpus(a)
        write_lines(a.out, lines)
        print(f"{a.out}: {summary['examples']} examples of {summary['kept']} kernels settled ok on "
              f"{summary['tasks']} tasks; {summary['results_rows'] - summary['kept']} results rows skipped"
              + "".join(f"\n  skipped, {reason}: {n}" for reason, n in summary["skipped"].items()))
        print("summary " + json.dumps(summary))
        return
    lines = []
    only = set(filter(None, a.only.split(",")))
    task_dirs = [p for p in sorted(pathlib.Path(a.tasks).iterdir())
                 if (p / "task.py").is_file() and (not only or p.name in only)]
    all_scores = score_all(a.crucible, task_dirs, a.devices.split(","), a.protocol)
    for task_dir in task_dirs:
        task_id = f"{a.prefix}/{task_dir.name}"
        cmd = [a.crucible, "rollout", "--print-prompt", task_id]
        if a.config:
            cmd += ["--config", a.config]
        prompt = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        task_doc = docstring((task_dir / "task.py").read_text(), "Model")
        scores = all_scores[task_dir]
        pairs = list(itertools.combinations(sorted(scores, key=lambda v: -scores[v]), 2))
        pair_prompts = [(shown, subprocess.run(cmd + [f"--exemplar={scores[v]}:{task_dir / (v + '.py')}" for v in shown],
                                               check=True, capture_output=True, text=True).stdout) for shown in pairs]
        for variant in a.variants.split(","):
            f = task_dir / f"{variant}.py"
            if not f.is_file():
                continue
            done = completion(task_doc, f.read_text())
            lines.append({"prompt": prompt, "completion": done, "task": task_id, "variant": variant, "exemplars": []})
            # Every pair of the task's correct variants, best first, as the
            # exemplar store can serve them: each prompt leads to every
            # variant alike, so stage 1 teaches the format and leaves the
            # choice of variant to stage 3's measured rewards.
            for shown, with_exemplars in pair_prompts:
                lines.append({"prompt": with_exemplars, "completion": done, "task": task_id, "variant": variant,
                              "exemplars": [{"variant": v, "score": scores[v]} for v in shown]})
    write_lines(a.out, lines)
    print(f"{a.out}: {len(lines)} examples")


def write_lines(path, lines):
    out = pathlib.Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(l) + "\n" for l in lines))


if __name__ == "__main__":
    main()
