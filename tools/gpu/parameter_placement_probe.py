"""Does where a model's parameters sit in GPU memory change its speed?

Identity of KernelBench v0 level 1 problem 40 (LayerNorm over (64, 256, 256),
16 MiB of weight and 16 MiB of bias) measured 1.011 on an H200 in every
bucket, by the wall clock and by CUDA events alike: the candidate's copy of
the model ran 1% faster than the reference's. This builds two identical
models, times them alternately with CUDA events (same input), then moves the
first model's parameters to fresh memory and times again. A ratio that
changes with the move is a placement effect, not the code.

Usage: python parameter_placement_probe.py TASK.py   (on a GPU machine)
"""

import importlib.util
import sys

import torch


def load(path):
    spec = importlib.util.spec_from_file_location("task", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def ratio(a, b, x, pairs=40):
    """Mean time of a over mean time of b, calls alternating, CUDA events."""
    times = {id(a): 0.0, id(b): 0.0}
    for i in range(pairs):
        for m in ((a, b) if i % 2 else (b, a)):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            start.record()
            m(*x)
            end.record()
            torch.cuda.synchronize()
            times[id(m)] += start.elapsed_time(end)
    return times[id(a)] / times[id(b)]


def rehome(model):
    """Every parameter and buffer copied to newly allocated memory."""
    for p in list(model.parameters()) + list(model.buffers()):
        p.data = p.data.clone()


def main():
    task = load(sys.argv[1])
    torch.set_grad_enabled(False)
    torch.manual_seed(0)
    a = task.Model(*task.get_init_inputs()).cuda()
    torch.manual_seed(0)
    b = task.Model(*task.get_init_inputs()).cuda()
    torch.manual_seed(1)
    x = [t.cuda() if isinstance(t, torch.Tensor) else t for t in task.get_inputs()]
    ratio(a, b, x, 5)
    for step in range(4):
        print("placement %d: time(first model) / time(second model) = %.4f" % (step, ratio(a, b, x)))
        rehome(a if step % 2 == 0 else b)


if __name__ == "__main__":
    main()
