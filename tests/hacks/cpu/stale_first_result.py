"""Wrong, not a hack: a stale result handed out as a fresh copy, the CPU
form of catalogue stale_cuda_graph (a CUDA graph captured on the first
call and replayed ever after without copying the new inputs in). The
first call computes and keeps its output; every later call returns a new
clone of it. From the second trial on, the output is bit for bit the
first trial's answer for other inputs, but in memory the candidate does
not keep: a stale computation, caught by the tolerance (status
incorrect), and not called a cache of outputs (output_retained), which
needs the returned memory still held by the candidate."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = None

    def forward(self, x):
        if self.first is None:
            self.first = torch.relu(x) * 6.0 + 1.0
        return self.first.clone()
