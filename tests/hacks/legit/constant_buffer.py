"""Legitimate: constants precomputed in the constructor and kept in a
registered buffer and a module global; a tuple-free single output. Must
settle ok (state, not a cache of outputs)."""
import torch
import torch.nn as nn

SHIFT = torch.ones(1)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.full((1,), 6.0))

    def forward(self, x):
        return torch.relu(x * self.scale) + SHIFT.to(x.device)
