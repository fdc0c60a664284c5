"""The GPU's L2 cache emptied before each timed call (CUDA).

Why: on an H200 KernelBench L3-2's identity (24 MB of weights a model, the
two models filling most of the 50 MB L2) settled 1.02 to 1.05, and the
round probe (tools/gpu/round_probe.py, PLACEMENT and SWAP) put it anywhere
from 0.936 to 1.088 as the models' tensors were moved: what of each model's
data the previous call left in the L2 depended on where it lay, and an
identical kernel paid more or fewer trips to memory for nothing it did.
With the flush, 0.995 to 1.002 across the same moves. (The other
identities off 1.00 had another cause: reference_placement.py.)

What it does: writes a buffer of twice the L2's size on the calling stream
before each timed call's sleep, in every round of both models, so that each
call starts with none of either model's data in the L2 (the rule of
Triton's do_bench and of nvbench). What it allows: anything a call does
inside itself, its own reuse of the L2 included; what it takes away is only
what a previous call left behind, for both models alike.

The buffer is taken at warm-up, before any task or candidate exists, and is
part of the worker's protected state (sandbox_worker._PROTECTED_STATE).

Who calls it: sandbox_worker.py (warm_up takes it; timed_call flushes).
"""

import torch


class CacheFlush:
    def __init__(self, device="cuda"):
        l2 = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0) or 64 * 2**20
        self.bytes = 2 * l2
        self._buffer = torch.empty(self.bytes, dtype=torch.uint8, device=device)

    def flush(self):
        """Queues the write on the current stream; returns at once."""
        self._buffer.fill_(1)
