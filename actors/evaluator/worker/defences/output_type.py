"""exact_output_type, materialized_storage: outputs that are not plain
tensors with memory behind them.

Catches: a tensor subclass (lazy or otherwise: exact_output_type), checked
before anything touches the output; an output whose layout is not strided,
that lives on the meta device or has no storage (materialized_storage).
Allows: views of the candidate's own results; other wrong types are plain
incorrect (exact_output_structure, in evaluate.cpp).
"""

import torch

from .copies import tensor_type
from .tensors import storage
from .violation import Violation

NAMES = ("exact_output_type", "materialized_storage")
CASES = ("tests/hacks/cpu/lazy_subclass.py",)


def materialized(t):
    """'' when t is a plain, dense tensor with real memory behind it; else why not."""
    if type(t) is not tensor_type:
        return "is %s, not exactly torch.Tensor" % type(t).__name__
    if t.layout != torch.strided:
        return "has layout %s, not strided" % t.layout
    if t.device.type == "meta":
        return "is a meta tensor (no storage)"
    if t.numel() and storage(t).data_ptr() == 0:
        return "has no storage"
    return ""


def output_violations(out):
    """Hack-level problems of a candidate's output: a tensor subclass (lazy
    or otherwise: exact_output_type) or a tensor without real memory behind
    it (materialized_storage). Other wrong types are plain incorrect."""
    for t in out if isinstance(out, (tuple, list)) else [out]:
        if isinstance(t, torch.Tensor) and type(t) is not tensor_type:
            return [Violation("exact_output_type", "output is %s, a subclass of torch.Tensor" % type(t).__name__)]
        if type(t) is tensor_type:
            why = materialized(t)
            if why:
                return [Violation("materialized_storage", "output " + why)]
    return []
