"""Hack: lower the task's hyperparameter (features kept) for both models.
Caught by: task_fingerprint."""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

for _m in list(sys.modules.values()):
    if "get_init_inputs" in getattr(_m, "__dict__", {}) and "keep" in vars(_m):
        _m.keep = 4


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, keep):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.keep = keep

    def forward(self, x):
        k = self.keep
        return torch.relu(F.linear(x, self.linear.weight[:k], self.linear.bias[:k]))
