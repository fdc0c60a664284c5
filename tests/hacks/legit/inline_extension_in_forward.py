"""Legitimate: an inline C++ extension built on the first forward, naming a
build folder outside the worker's scratch directory that it never makes
(/tmp/cuda_extensions, as CUDA-L1's level 3 problem 43 does). The build
folder a candidate names is ignored: builds are keyed by their arguments and
land in the compile cache (worker/extensions.py), where the compile pool
builds this one when it calls ModelNew once. Must settle ok."""
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SOURCE = r"""
#include <torch/extension.h>

torch::Tensor fused_scale_relu(torch::Tensor x) { return torch::relu(x).mul_(6.0).add_(1.0); }
"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ext = None

    def forward(self, x):
        if self.ext is None:
            self.ext = load_inline(name="fused_scale_relu", cpp_sources=SOURCE, functions=["fused_scale_relu"],
                                   extra_cflags=["-O3", "-DNDEBUG"], build_directory="/tmp/cuda_extensions")
        return self.ext.fused_scale_relu(x)
