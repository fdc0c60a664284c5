# Known-faster rewrite of KernelBench v0 level 1 problem 88 (MinGPTNewGelu):
# the tanh approximation of GELU written as seven elementwise ops (seven
# passes over a 2000 x 2000 tensor) is exactly F.gelu(x, approximate="tanh"),
# one fused pass. Used by tools/gpu/kernelbench_eval.sh.
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.gelu(x, approximate="tanh")
