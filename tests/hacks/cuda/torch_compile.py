"""Legitimate: torch.compile (TorchInductor and Triton) of the task's own
computation, as CUDA-L1's A100 L2-34, L2-49 and L2-72 do. Its first call
compiles: it runs `file -b` and Triton's ptxas (the toolchain, allowed) and
leaves the compiler's thread behind (a thread torch's own code starts on the
first call: background_threads allows it). Must settle ok."""
import torch
import torch.nn as nn


def _fused(x):
    return torch.relu(x) * 2.0 + 1.0


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.fused = torch.compile(_fused)

    def forward(self, x):
        return self.fused(x)
