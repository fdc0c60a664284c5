import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, keep):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.keep = keep

    def forward(self, x):
        return torch.relu(self.linear(x))[:, : self.keep]
