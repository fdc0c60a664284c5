"""The reference's tensors moved to fresh memory once the candidate is built
(CUDA).

Why: on an H200 three KernelBench identities (L2-62, L2-75, L2-98: a small
GEMM followed by a norm or pooling, batch 128) settled at 1.02 in every
call of three sessions, with the L2 emptied before each timed call
(cache_flush.py) as without. The round probe (tools/gpu/round_probe.py) on
L2-62: 1.032 as loaded; 1.023 and 1.026 with the candidate's tensors moved
twice; 0.980 with the two model objects' roles swapped; 0.999 with both
models' tensors moved. The gap follows the reference object's memory, the
blocks the caching allocator gave it first, when the task was loaded and
before its probes ran; an identical model placed later runs faster.

What it does: after the candidate's constructor, each of the reference's
parameters and buffers gets a fresh copy of its values (the same tensor
objects, new storage), so that both models' tensors were allocated after
the task's load. Values, object identities and the reference's own
aliasing within a tensor are unchanged (reference_integrity's fingerprint
holds). What it allows: anything; the candidate's tensors are never moved
(a candidate may hold their addresses: CUDA graphs, native code).

Who calls it: sandbox_worker.on_load_candidate.
"""

import torch


def refresh(model):
    """Gives every parameter and buffer of model (an nn.Module) new storage
    with the same values."""
    if not isinstance(model, torch.nn.Module):
        return
    with torch.no_grad():
        for t in list(model.parameters()) + list(model.buffers()):
            t.data = t.data.clone()
