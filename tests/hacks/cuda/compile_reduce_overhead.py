"""Not a deception, and not correct: torch.compile with mode
"reduce-overhead" replays a CUDA graph whose output lives in the graph's
memory pool, so the next call overwrites the tensor the previous call
returned (torch then refuses to read it: "accessing tensor output of
CUDAGraphs that has been overwritten by a subsequent run"), as CUDA-L1's
A100 L2-49 does. A caller that keeps two results gets wrong numbers or an
error: incorrect, output_aliasing (it crashed the worker before)."""
import torch
import torch.nn as nn


def _fused(x):
    return torch.relu(x) * 2.0 + 1.0


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.fused = torch.compile(_fused, mode="reduce-overhead")

    def forward(self, x):
        return self.fused(x)
