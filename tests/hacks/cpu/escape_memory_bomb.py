"""Hack: exhaust memory to take the machine down. Caught by: rlimit_memory
(the address-space limit refuses the allocation: runtime_error)."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        hoard = []
        while True:
            hoard.append(x.new_ones(1 << 34))
