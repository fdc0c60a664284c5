"""Legitimate: an inline C++ extension built in the constructor, into a
build folder the candidate makes itself (under TMPDIR, the worker's scratch
directory), with its own name and flags. The compile pool builds it ahead
of the timed worker (it constructs ModelNew), which imports it from the
compile cache (worker/extensions.py). Must settle ok."""
import os
import tempfile

import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SOURCE = r"""
#include <torch/extension.h>

torch::Tensor scale_relu(torch::Tensor x) { return torch::relu(x).mul_(6.0).add_(1.0); }
"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        build = os.path.join(tempfile.gettempdir(), "my_extensions")
        os.makedirs(build, exist_ok=True)
        self.ext = load_inline(name="legit_init_ext", cpp_sources=SOURCE, functions=["scale_relu"],
                               extra_cflags=["-O2"], build_directory=build, verbose=True)

    def forward(self, x):
        return self.ext.scale_relu(x)
