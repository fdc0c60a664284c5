"""The baseline: candidates timed the way KernelBench's harness times them.

Written here (not copied) after KernelBench's description of its timing:
for the reference and then, separately, for the candidate, 3 warm-up calls
and 100 timed calls, each timed with a pair of CUDA events, the L2 cache
flushed (a 256 MiB buffer zeroed) before each timed call, no_grad, and the
mean of the 100 times reported; speedup = reference mean / candidate mean.
No pairing, no randomized order, no statistics over repeats: the method that
issue 3 measured giving identity candidates 0.66 to 1.11.

tools/gpu/kernelbench_eval.sh runs this after crucible's evaluator over the
same jobs file (`NAME TASK CANDIDATE` lines, as crucible-bench-eval --jobs),
so the two spreads of 3 repeats stand side by side. One JSON object a line:
job, repeat, ref_ms, cand_ms, speedup (or error).

Usage: python kernelbench_style_timing.py --jobs FILE [--repeat 3] [--out FILE]
"""

import argparse
import importlib.util
import json
import os
import sys

import torch

WARMUP = 3
TRIALS = 100
L2_FLUSH_BYTES = 256 << 20


def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def read_jobs(path):
    base = os.path.dirname(os.path.abspath(path))
    jobs = []
    for line in open(path):
        fields = line.split("#", 1)[0].split()
        if fields:
            name, task, cand = fields
            jobs.append((name, os.path.join(base, task), os.path.join(base, cand)))
    return jobs


def mean_ms(model, inputs, flush):
    """3 warm-ups, then 100 calls each timed with CUDA events after an L2 flush."""
    with torch.no_grad():
        for _ in range(WARMUP):
            model(*inputs)
        torch.cuda.synchronize()
        times = []
        for _ in range(TRIALS):
            flush.zero_()
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            model(*inputs)
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end))
    return sum(times) / len(times)


def time_job(index, name, task_path, cand_path, seed, flush):
    task = load_module(task_path, "kb_task_%d" % index)
    cand = load_module(cand_path, "kb_cand_%d" % index)
    init = task.get_init_inputs()
    torch.manual_seed(seed)
    ref = task.Model(*init).cuda()
    torch.manual_seed(seed)
    new = cand.ModelNew(*init).cuda()
    torch.manual_seed(seed)
    inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in task.get_inputs()]
    ref_ms = mean_ms(ref, inputs, flush)
    cand_ms = mean_ms(new, inputs, flush)
    return {"ref_ms": ref_ms, "cand_ms": cand_ms, "speedup": ref_ms / cand_ms}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", required=True)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default="-")
    args = ap.parse_args()
    out = sys.stdout if args.out == "-" else open(args.out, "w")
    flush = torch.empty(L2_FLUSH_BYTES, dtype=torch.uint8, device="cuda")
    jobs = read_jobs(args.jobs)
    index = 0
    for rep in range(1, args.repeat + 1):
        for name, task, cand in jobs:
            index += 1
            row = {"job": name, "repeat": rep}
            try:
                row.update(time_job(index, name, task, cand, 42, flush))
            except Exception as e:  # a candidate that fails here is reported, not fatal
                row["error"] = "%s: %s" % (type(e).__name__, str(e)[:300])
            print(json.dumps(row), file=out, flush=True)
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
