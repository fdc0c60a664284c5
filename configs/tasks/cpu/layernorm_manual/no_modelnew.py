import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Defines Model again but no ModelNew."""

    def __init__(self, features, eps):
        super().__init__()
        self.eps = eps

    def forward(self, x):
        return F.layer_norm(x, (x.shape[-1],), None, None, self.eps)
