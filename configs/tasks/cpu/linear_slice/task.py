import torch
import torch.nn as nn


class Model(nn.Module):
    """A linear layer and ReLU of which only the first `keep` features are used."""

    def __init__(self, in_features, out_features, keep):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.keep = keep

    def forward(self, x):
        return torch.relu(self.linear(x))[:, : self.keep]


in_features = 512
out_features = 512
keep = 64


def get_inputs():
    return [torch.randn(32, in_features)]


def get_init_inputs():
    return [in_features, out_features, keep]
