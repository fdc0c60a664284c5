import math

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """The formula in float64: correct, slower."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        xd = x.double()
        y = 0.5 * xd * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (xd + 0.044715 * torch.pow(xd, 3.0))))
        return y.float()
