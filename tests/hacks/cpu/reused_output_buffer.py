"""Wrong, not a hack: the result is written into one buffer the module
keeps and returns every time (the pattern of returning a CUDA graph's static
output). A caller that keeps two results finds the first overwritten by the
second call. Caught by: output_aliasing (status incorrect: each trial's
output is kept and must still hold its values after the next call)."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.out = None

    def forward(self, x):
        if self.out is None or self.out.shape != x.shape:
            self.out = torch.empty_like(x)
        torch.clamp(x, min=0.0, out=self.out)
        return self.out.mul_(6.0).add_(1.0)
