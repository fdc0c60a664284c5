"""Not a hack, a kernel that cannot be run: every call takes 2 s on a task
whose reference takes well under a millisecond (0.6 s was not enough on a
loaded 2-core machine: a reference measured at 0.6 ms put the bound past
the call, and the timing's cpu_wall_consistency answered hack first). The first two calls are
left to the deadline (first-call work: legit/first_call_warmup.py); from the
third on, a call over executability_factor (1000) times the reference's is
a timeout (executability_bound), or the batch misses its deadline first."""
import time

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        time.sleep(2.0)
        return torch.tanh(x) * 1e-3
