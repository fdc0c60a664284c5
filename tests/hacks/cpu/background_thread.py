"""Hack: return at once and let a thread write the output later, so that the
timed call does no work (the CPU clock of the calling thread sees nothing).
Caught by: background_threads (a thread is alive after the call returns)."""
import threading
import time

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)

        def fill():
            time.sleep(0.05)
            out.copy_(torch.relu(x) * 2.0 * 3.0 + 1.0)

        threading.Thread(target=fill, daemon=True).start()
        return out
