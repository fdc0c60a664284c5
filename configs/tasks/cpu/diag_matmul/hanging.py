import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Spins forever in Python."""

    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        while True:
            pass
