"""Legitimate: a TorchScript function compiled at import (TorchScript reads
frames and source while compiling) and a warning in every call. Must settle ok."""
import warnings

import torch
import torch.nn as nn


@torch.jit.script
def scale_relu(x: torch.Tensor) -> torch.Tensor:
    return torch.relu(x * 6.0) + 1.0


class ModelNew(nn.Module):
    def forward(self, x):
        warnings.warn("scale_relu: scripted path")
        return scale_relu(x)
