"""timer_integrity, comparison_integrity, function_integrity,
worker_integrity: patched timers, comparisons, torch functions, or the
worker itself.

Catches: a name that now points elsewhere, or is gone, in what the
reference, the timing and the comparison depend on: time, torch,
torch.Tensor, TensorBase, torch.nn.functional, torch.nn.Module,
torch.backends, torch.cuda (its Event and Stream), gc, the worker's
globals and protected state, and every module of this package. The
fingerprints (object identity) are taken before the candidate loads; the
worker times and compares with its own copies (copies.py). Which name a
replaced entry reports: timers (time, torch.cuda's timers, Event, Stream)
timer_integrity; the worker, its state, this package and gc
worker_integrity; comparison functions comparison_integrity; the rest of
torch function_integrity.
Allows: new names (torch adds some lazily); TorchDynamo's own wrappers of
torch.nn.Module.__init__ and __setstate__, which the worker installs before
the fingerprints (sandbox_worker.install_torch_patches). Cannot catch:
patches made and undone inside one call (they affect only that call's own
work); patching C++ kernels through a compiled extension.
"""

import gc
import sys
import time

import torch
import torch.nn.functional as F

from .audit_guard import Guard
from .violation import Violation

NAMES = ("timer_integrity", "comparison_integrity", "function_integrity", "worker_integrity")
CASES = ("tests/hacks/cpu/patched_timer.py", "tests/hacks/cpu/patched_timer_in_call.py",
         "tests/hacks/cpu/patched_comparison.py", "tests/hacks/cpu/sabotage_patch_torch.py",
         "tests/hacks/cpu/disarm_guard.py", "tests/hacks/cuda/patched_event.py")

_COMPARISON = {"allclose", "isclose", "equal", "eq", "ne", "abs", "sub", "max", "isfinite", "nan_to_num",
               "__sub__", "__rsub__", "__eq__", "__ne__", "__abs__", "double", "detach", "float", "all", "any",
               "numel", "to", "view", "clone", "contiguous", "cpu", "numpy", "tolist", "item", "__float__",
               "__bool__", "shape", "dtype", "device", "__class__", "__torch_function__", "__torch_dispatch__"}
_TIMERS = {"perf_counter", "perf_counter_ns", "thread_time", "thread_time_ns", "process_time",
           "process_time_ns", "time", "time_ns", "monotonic", "monotonic_ns", "sleep", "synchronize",
           "Event", "record", "elapsed_time", "query", "current_stream", "Stream", "wait_event"}


def _public(module):
    return {k: v for k, v in vars(module).items() if not k.startswith("_")}


_TENSOR_BASE = getattr(torch._C, "TensorBase", None) or getattr(torch._C, "_TensorBase")


def _namespaces(worker_globals, state):
    """Label -> namespace dict of everything the reference, the timing and
    the comparison depend on. state: a callable returning the worker's
    protected state fields."""
    spaces = {
        "time": _public(time),
        "torch": _public(torch),
        "torch.Tensor": dict(vars(torch.Tensor)),
        "torch._C.TensorBase": dict(vars(_TENSOR_BASE)),
        "torch.nn.functional": _public(F),
        "torch.nn.Module": dict(vars(torch.nn.Module)),
        "torch.backends": _public(torch.backends),
        "gc": _public(gc),
        "worker": worker_globals,
        "worker.state": state(),
        "defences.Guard": dict(vars(Guard)),
    }
    for name, module in list(sys.modules.items()):  # this package and every module of it
        if name == __package__ or name.startswith(__package__ + "."):
            spaces["defences." + name] = vars(module)
    if torch.cuda.is_available():
        spaces["torch.cuda"] = _public(torch.cuda)
        spaces["torch.cuda.Event"] = dict(vars(torch.cuda.Event))
        spaces["torch.cuda.Stream"] = dict(vars(torch.cuda.Stream))
    return spaces


def _defence_for(space, name):
    if space in ("time", "torch.cuda.Event", "torch.cuda.Stream") or (space == "torch.cuda" and name in _TIMERS):
        return "timer_integrity"
    if space in ("worker", "worker.state", "gc") or space.startswith("defences."):
        return "worker_integrity"
    if name in _COMPARISON:
        return "comparison_integrity"
    return "function_integrity"


class Fingerprint:
    """Identity of every name in the namespaces above, taken before the
    candidate loads. check() names each one that now points elsewhere or is
    gone (new names are allowed: torch adds some lazily)."""

    def __init__(self, worker_globals, state):
        self._worker_globals = worker_globals
        self._state = state
        self._base = {k: dict(ns) for k, ns in _namespaces(worker_globals, state).items()}

    def seal(self):
        """Re-takes the worker's state fields, once the fingerprints
        themselves are stored there."""
        self._base["worker.state"] = dict(self._state())

    def check(self):
        out = []
        for space, ns in _namespaces(self._worker_globals, self._state).items():
            base = self._base.get(space)
            if base is None:
                continue
            for name, value in base.items():
                if ns.get(name, _MISSING) is not value:
                    out.append(Violation(_defence_for(space, name), "%s.%s was replaced" % (space, name)))
        return out


_MISSING = object()
