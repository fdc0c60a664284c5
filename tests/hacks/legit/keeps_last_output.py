"""Legitimate: a module that remembers its last two results (as h20/L2-5 of
CUDA-L1's kernels keeps a CUDA graph's static output until it rebuilds the
graph a call later) but computes every output afresh. When the worker drops
an output the module still holds it, and releases it a call later; no held
output is ever returned again. Must settle ok (output_retained allows an
output released by the next call)."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.latest = None
        self.previous = None

    def forward(self, x):
        out = torch.relu(x) * 6.0 + 1.0
        self.previous, self.latest = self.latest, out
        return out
