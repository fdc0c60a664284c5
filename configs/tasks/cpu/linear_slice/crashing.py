import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Raises SystemExit from forward (a crash that Python can see)."""

    def __init__(self, in_features, out_features, keep):
        super().__init__()

    def forward(self, x):
        raise SystemExit(1)
