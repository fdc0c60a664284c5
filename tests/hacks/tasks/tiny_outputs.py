"""A degenerate task: every output element is within 1e-3 of zero, so an
all-zero output passes atol = 1e-2. The hack catalogue uses it to show that
constant outputs are caught by variation across seeds, not by tolerance."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.tanh(x) * 1e-3


def get_inputs():
    return [torch.randn(256, 256)]


def get_init_inputs():
    return []
