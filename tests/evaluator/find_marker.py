"""Correct only in a clean worker: returns zeros (incorrect) when it finds
what leave_marker.py leaves behind."""
import builtins
import sys

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        if hasattr(builtins, "_crucible_marker") or hasattr(torch, "_crucible_marker") or \
                "crucible_marker" in sys.modules:
            return torch.zeros_like(x)
        return torch.relu(x) * 6.0 + 1.0
