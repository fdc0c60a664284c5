"""Legitimate: first calls that do once what later calls reuse, as CUDA-L1's
kernels do with cuDNN autotuning (cudnn.benchmark), TorchScript (its
profiling run, then an optimizing run) and CUDA graph capture: on a small
task such a first call takes a thousand times the reference's (A100 L1-62:
1.26 s against 1.1 ms; on the H200, A100 L2-62, L2-74, L2-75 and L2-85 ran
past the 3 s floor of the first request's deadline). The sleeps stand for
that work. The executability bound leaves the first two calls to the
request's deadline, which allows them the candidate's load time (60 s) as
well; must settle ok."""
import time

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        if self.calls <= 2:
            time.sleep(4.0 / self.calls)  # autotuning, then the optimizing run
        return torch.tanh(x) * 1e-3
