import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Correct on the first call, then spins (caught at the first timed rounds or trial 2)."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, A, B):
        self.calls += 1
        while self.calls > 1:
            pass
        return torch.dot(A.sum(dim=0), B.sum(dim=1))
