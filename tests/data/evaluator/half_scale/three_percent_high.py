"""3% above the reference: outside atol = rtol = 1e-2, inside 5e-2."""
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return (x * 2.06).half()
