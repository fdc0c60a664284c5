import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
#include <torch/extension.h>

torch::Tensor scale_relu(torch::Tensor x) {
  // One buffer: relu into a new tensor, then scale and shift in place.
  return torch::relu(x).mul_(6.0).add_(1.0);
}
"""

module = load_inline(
    name="crucible_scale_relu",
    cpp_sources=cpp_source,
    functions=["scale_relu"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    """The fused form in C++ through load_inline."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        return module.scale_relu(x)
