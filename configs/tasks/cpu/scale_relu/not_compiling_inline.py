import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
#include <torch/extension.h>

torch::Tensor scale_relu(torch::Tensor x) {
  return x.relu() * 6.0 + 1.0   // missing semicolon
}
"""

module = load_inline(name="crucible_scale_relu_broken", cpp_sources=cpp_source, functions=["scale_relu"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return module.scale_relu(x)
