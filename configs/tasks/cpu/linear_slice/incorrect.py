import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    """Bug: keeps the last features instead of the first."""

    def __init__(self, in_features, out_features, keep):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.keep = keep

    def forward(self, x):
        k = self.keep
        return torch.relu(F.linear(x, self.linear.weight[-k:], self.linear.bias[-k:]))
