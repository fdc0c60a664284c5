"""Legitimate: an inline C++ extension built on a later call than the first,
after a first call in plain PyTorch (a profiling run before building, as
TorchScript does). The compile pool calls ModelNew once, on meta tensors
where torch has them, so a build behind a first call, or behind a value
read that meta tensors cannot give (`.item()`, as CUDA-L1's kernels that
build inside an autograd Function do: A100 L2-67 and L2-71), is not
reached there; the pool finds the call in the source and builds it ahead
all the same (worker/ahead_builds.py), so the timed worker imports it from
the cache. Must settle ok."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SOURCE = r"""
#include <torch/extension.h>

torch::Tensor scaled_relu(torch::Tensor x, double bias) { return torch::relu(x).mul_(6.0).add_(bias); }
"""
FUNCTIONS = ["scaled_relu"]
FLAGS = ["-O2"]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0
        self.ext = None

    def forward(self, x):
        self.calls += 1
        if self.calls == 1:  # the profiling run
            return torch.relu(x) * 6.0 + 1.0
        if self.ext is None:
            self.ext = load_inline(name="scaled_relu_on_later_call", cpp_sources=SOURCE, functions=FUNCTIONS,
                                   extra_cflags=FLAGS + ["-DNDEBUG"])
        return self.ext.scaled_relu(x, 1.0)
