"""Hack: allocate without writing, hoping the allocator hands back the
reference's freed output for the same inputs. Caught by: the reference runs
after the candidate and every freed output is poisoned (poisoned_memory),
or the garbage is simply wrong (tolerance / nonfinite_output)."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.empty_like(x)
