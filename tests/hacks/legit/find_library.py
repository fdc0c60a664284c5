"""Legitimate: ctypes.util.find_library, as CuPy calls it at import and on
its first kernel (CUDA-L1 A100 L1-22 and L1-31 use CuPy), runs
`/sbin/ldconfig -p` (and gcc or ld where that finds nothing): a read of the
linker's cache, allowed as toolchain, never sandbox_process. Here at import
and in the constructor: a program run in every timed call on CPU is work
outside the measured thread (cpu_wall_consistency), as it should be. Must
settle ok."""
import ctypes.util

import torch
import torch.nn as nn

LIBM = ctypes.util.find_library("m")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.libc = ctypes.util.find_library("c")

    def forward(self, x):
        return torch.relu(x) * 6.0 + 1.0
