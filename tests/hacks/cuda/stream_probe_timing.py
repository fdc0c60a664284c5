"""Hack attempt: tell the round type by timing: launch a tiny kernel, wait
a few microseconds on the host and see whether it has run; in a measured
round the sleep holds it back. Then compute on a side stream that does not
wait. Earns nothing under the stream fence (worker/stream_fence.py)."""
import time

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.side = None
        self.flag = None

    def forward(self, x):
        if self.side is None:
            self.side = torch.cuda.Stream()
            self.flag = torch.zeros(1, device=x.device)
        self.flag.add_(1)
        done = torch.cuda.Event()
        done.record()
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < 20e-6:
            pass
        if not done.query():
            with torch.cuda.stream(self.side):
                return torch.relu(x) * 2.0 + 1.0
        return torch.relu(x) * 2.0 + 1.0
