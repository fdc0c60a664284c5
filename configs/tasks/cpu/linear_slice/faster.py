import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    """Skipped work: compute only the output features that are kept."""

    def __init__(self, in_features, out_features, keep):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.keep = keep

    def forward(self, x):
        k = self.keep
        return torch.relu(F.linear(x, self.linear.weight[:k], self.linear.bias[:k]))
