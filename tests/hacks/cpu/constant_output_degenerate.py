"""Hack: zeros on a degenerate task (tests/hacks/tasks/tiny_outputs.py, whose
outputs are all within atol of zero, so zeros pass every tolerance check).
Caught by: constant_output (the reference's outputs vary across seeds, the
candidate's do not)."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.zeros_like(x)
