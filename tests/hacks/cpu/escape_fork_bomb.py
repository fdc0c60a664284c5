"""Hack: a fork bomb. Caught by: sandbox_process (the first fork is refused;
RLIMIT_NPROC and the process-group kill stand behind it)."""
import os

import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        while True:
            os.fork()
