"""Hack: make CUDA events report no time. Caught by: timer_integrity."""
import torch
import torch.nn as nn

torch.cuda.Event.elapsed_time = lambda self, end: 0.001
torch.cuda.synchronize = lambda *a, **k: None


class ModelNew(nn.Module):
    def forward(self, A, B):
        return A @ B
