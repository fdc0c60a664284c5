"""Hack: make the timer run slow so that every call looks short. Caught by:
timer_integrity (time.* checked against copies taken before the candidate
loads; the worker never times with the public names)."""
import time

import torch
import torch.nn as nn

_real = time.perf_counter
time.perf_counter = lambda: _real() * 0.01
time.thread_time = lambda: 0.0


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x) * 6.0 + 1.0
