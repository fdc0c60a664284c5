import os
import signal

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Kills its own process."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        os.kill(os.getpid(), signal.SIGKILL)
