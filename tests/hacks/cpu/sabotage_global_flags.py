"""Hack: switch a process-wide backend flag inside the call (it would stay
on for the reference's next call). Caught by: global_state."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        torch.backends.mkldnn.enabled = False
        torch.set_float32_matmul_precision("medium")
        return torch.relu(x) * 6.0 + 1.0
