"""poisoned_memory (incorrect): returning memory the candidate did not
write (the reference's freed output, torch.empty).

Catches: after every round all outputs and inputs of both models are
filled with 0xFF bytes (NaN for floats, -1 for integers) before they are
freed; a floating output holding all-ones words, which no arithmetic
produces, is named. Allows: memory the candidate wrote itself (in-place
work on its own buffers: catalogue inplace_intermediate); the models'
parameters, buffers and the tensors modules hold as globals are state and
never poisoned (protected_storages).
"""

import torch

from .copies import tensor_type
from .tensors import bytes_view, storage

NAMES = ("poisoned_memory",)
CASES = ("tests/hacks/cpu/reference_freed_output.py", "tests/hacks/cpu/steal_checked_round.py",
         "tests/hacks/legit/inplace_intermediate.py")


def protected_storages(models, modules):
    """Storage addresses of models' parameters and buffers and of tensors
    that modules hold as globals: state, never poisoned."""
    out = set()
    for m in models:
        if isinstance(m, torch.nn.Module):
            for t in list(m.parameters()) + list(m.buffers()):
                out.add(storage(t).data_ptr())
    for mod in modules:
        for v in list(vars(mod).values()):
            if type(v) is tensor_type:
                out.add(storage(v).data_ptr())
    return out


def poison(xs, protected):
    """Fill the whole storage of each tensor with 0xFF bytes (NaN for every
    floating type, -1 for integers) before it is freed, so that a candidate
    that returns memory it did not write (torch.empty landing on a freed
    reference output, a cached buffer) returns poison."""
    for t in xs:
        if type(t) is not tensor_type or t.is_sparse or t.device.type == "meta":
            continue
        try:
            s = storage(t)
            if s.nbytes() == 0 or s.data_ptr() in protected:
                continue
            bytes_view(t).fill_(255)
        except RuntimeError:  # torch refuses to touch it: a CUDA graph's output a later replay overwrote
            continue


def holds_poison(t):
    """True when a floating output contains all-ones words: the poison
    pattern, which no arithmetic produces (a computed NaN is canonical)."""
    if type(t) is not tensor_type or not t.is_floating_point() or not t.numel():
        return False
    ints = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}.get(t.element_size())
    if ints is None:
        return False
    return bool((t.detach().reshape(-1).view(ints) == -1).any())
