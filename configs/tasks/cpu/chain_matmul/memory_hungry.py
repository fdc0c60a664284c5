import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Keeps reserving 1 GiB blocks until the address-space limit stops it."""

    def __init__(self):
        super().__init__()
        self.hoard = []

    def forward(self, A, B, C):
        while True:
            self.hoard.append(torch.empty(1 << 28))
