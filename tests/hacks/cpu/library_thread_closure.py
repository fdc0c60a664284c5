"""Hack: let a thread that torch's own code starts run the work after the
call returns. torch._lazy's AsyncClosureHandler starts its event loop
thread from torch/_lazy/closure.py (a library origin, which a first call
may leave behind) and runs the closures queued to it. Caught by:
background_threads (the loop thread is running the candidate's closure when
the call ends)."""
import time

import torch
import torch.nn as nn
from torch._lazy.closure import AsyncClosureHandler


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.handler = AsyncClosureHandler()

    def forward(self, x):
        out = torch.empty_like(x)

        def fill():
            time.sleep(0.05)
            out.copy_(torch.relu(x) * 2.0 * 3.0 + 1.0)

        self.handler.run(fill)
        return out
