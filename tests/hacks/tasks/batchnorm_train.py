"""A KernelBench-style task whose reference updates its own state in every
call: BatchNorm in training mode (KernelBench level 2 problem 39's shape of
work, small enough for CPU). Its running statistics change with each
forward; its output uses the batch's statistics, so the identity candidate
must settle at exactly 1.00 (reference_integrity compares like with like)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.linear = nn.Linear(features, features)
        self.bn = nn.BatchNorm1d(features)

    def forward(self, x):
        return torch.relu(self.bn(self.linear(x)))


def get_inputs():
    return [torch.randn(256, 128)]


def get_init_inputs():
    return [128]
