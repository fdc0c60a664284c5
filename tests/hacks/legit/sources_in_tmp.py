"""Legitimate: the shape of CUDA-L1's A100 L3-43. At import the candidate
makes a fixed folder under /tmp, writes its own C++ source there, and builds
it with cpp_extension.load from that path. /tmp is the worker's own
(worker/private_tmp.py): the folder and the file land in the scratch's
tmp/, the build reads them from there, the compile pool builds it ahead and
the timed worker imports it. Must settle ok (it was hack:
sandbox_filesystem before private_tmp)."""
import os

import torch.nn as nn
from torch.utils.cpp_extension import load

SOURCE = r"""
#include <torch/extension.h>

torch::Tensor scale_relu(torch::Tensor x) { return torch::relu(x).mul_(6.0).add_(1.0); }

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("scale_relu", &scale_relu); }
"""

os.makedirs("/tmp/crucible_cuda_extensions", exist_ok=True)
with open("/tmp/crucible_cuda_extensions/scale_relu.cpp", "w") as f:
    f.write(SOURCE)
assert os.path.exists("/tmp/crucible_cuda_extensions/scale_relu.cpp")
ext = load(name="legit_tmp_sources_ext", sources=["/tmp/crucible_cuda_extensions/scale_relu.cpp"],
           extra_cflags=["-O2"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.scale_relu(x)
