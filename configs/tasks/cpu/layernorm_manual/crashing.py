import faulthandler

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Raises SIGSEGV inside the interpreter."""

    def __init__(self, features, eps):
        super().__init__()

    def forward(self, x):
        faulthandler._sigsegv()
        return x
