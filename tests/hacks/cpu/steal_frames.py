"""Hack: read the reference's output out of the worker's frames. Caught by:
introspection (sys._getframe reaching the worker's frames)."""
import sys

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        f = sys._getframe(1)
        while f is not None:
            for v in f.f_locals.values():
                if type(v) is torch.Tensor and v.shape == x.shape and v.data_ptr() != x.data_ptr():
                    return v
            f = f.f_back
        return torch.empty_like(x)
