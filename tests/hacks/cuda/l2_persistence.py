"""Hack: reserve L2 for persisting accesses so that the candidate's data
stays resident across rounds. Caught by: global_state (the persisting-L2
limit is reset to 0 before every call and checked after it)."""
import ctypes

import torch
import torch.nn as nn


def _cudart():
    with open("/proc/self/maps") as maps:
        for line in maps:
            if "libcudart" in line:
                return ctypes.CDLL(line.split()[-1])


class ModelNew(nn.Module):
    def forward(self, A, B):
        lib = _cudart()
        if lib is not None:
            lib.cudaDeviceSetLimit(0x06, ctypes.c_size_t(32 << 20))
        return A @ B
