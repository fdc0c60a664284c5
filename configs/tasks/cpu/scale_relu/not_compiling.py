import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
    return torch.relu(x).mul_(6.0).add_(1.0)
