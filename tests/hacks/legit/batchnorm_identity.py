"""Legitimate: the identity of a task whose reference updates its BatchNorm
running statistics in every call (tests/hacks/tasks/batchnorm_train.py):
the reference's code as ModelNew, built from the same seed. The
candidate's own BatchNorm updates its own; neither is a hack."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.linear = nn.Linear(features, features)
        self.bn = nn.BatchNorm1d(features)

    def forward(self, x):
        return torch.relu(self.bn(self.linear(x)))

