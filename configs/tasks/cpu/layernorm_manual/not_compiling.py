import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, features, eps):
        super().__init__()
        self.eps = eps

    def forward(self, x):
        return x -> torch.layer_norm(x, (x.shape[-1],))
