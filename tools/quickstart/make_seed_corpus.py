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
"""
import argparse
import ast
import concurrent.futures
import itertools
import json
import pathlib
import subprocess

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
    a = ap.parse_args()
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
    out = pathlib.Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(l) + "\n" for l in lines))
    print(f"{out}: {len(lines)} examples")


if __name__ == "__main__":
    main()
