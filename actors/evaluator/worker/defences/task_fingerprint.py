"""task_fingerprint: shrinking sizes or hyperparameters, patching Model or
get_inputs.

Catches: a change, after the candidate is imported, to any task global
(identity and, for plain values, repr), its functions' code and defaults,
its classes' dicts, what get_init_inputs() returns under the init seed, or
the inputs get_inputs() makes for a probe seed; taken before the candidate
is imported, rechecked after loading, after correctness and after each
timing request (shapes only). Allows: nothing of the task to change.
Cannot catch: changes made and undone within one call.
"""

import torch

from .tensors import digest
from .violation import Violation

NAMES = ("task_fingerprint",)
CASES = ("tests/hacks/cpu/shrink_sizes.py", "tests/hacks/cpu/shrink_hyperparameters.py",
         "tests/hacks/cpu/sabotage_patch_model.py")


def _plain(value):
    """A value's fingerprint part that survives in-place mutation."""
    if isinstance(value, torch.Tensor):
        return ("tensor", tuple(value.shape), str(value.dtype), digest([value]))
    if isinstance(value, (int, float, str, bool, bytes, type(None), tuple, list, dict, set, frozenset)):
        return ("value", repr(value))
    return ("object", id(value))


class TaskFingerprint:
    """The task module as the evaluator loaded it, before the candidate is
    imported: every global (identity and, for plain values, repr), the code
    and defaults of its functions, the dicts of its classes, what
    get_init_inputs() returns under the init seed and the shapes (and, with
    values, the values) that get_inputs() makes for a fixed seed. A
    candidate that shrinks sizes, patches Model or get_inputs, or changes a
    hyperparameter is caught (task_fingerprint)."""

    def __init__(self, module, make_init, make_inputs, probe_seed):
        self._module = module
        self._make_init = make_init
        self._make_inputs = make_inputs
        self._probe_seed = probe_seed
        self._globals = self._take_globals()
        self._init = self._take_init()
        self._inputs = self._take_inputs(True)
        self._shapes = self._take_inputs(False)

    def _take_globals(self):
        out = {}
        for name, value in list(vars(self._module).items()):
            if name.startswith("__") and name != "__dict__":
                continue
            out[name] = (value, _plain(value))
            if callable(value) and hasattr(value, "__code__"):
                out[name + ".__code__"] = (value.__code__, ("code", repr(value.__defaults__)))
            if isinstance(value, type):
                for k, v in list(vars(value).items()):
                    out["%s.%s" % (name, k)] = (v, ("object", id(v)))
        return out

    def _take_init(self):
        return [_plain(x) for x in self._make_init()]

    def _take_inputs(self, values):
        xs = self._make_inputs(self._probe_seed)
        if values:
            return [_plain(x) for x in xs]
        return [(tuple(x.shape), str(x.dtype)) if isinstance(x, torch.Tensor) else _plain(x) for x in xs]

    def check(self, values=True):
        """values: also compare input values and init inputs (a get_inputs()
        call and a copy of its tensors; the cheap form checks shapes)."""
        now = self._take_globals()
        for name, (value, plain) in self._globals.items():
            if name not in now:
                return [Violation("task_fingerprint", "task global %s was removed" % name)]
            nvalue, nplain = now[name]
            if nvalue is not value or nplain != plain:
                return [Violation("task_fingerprint", "task global %s changed" % name)]
        if values and self._take_init() != self._init:
            return [Violation("task_fingerprint", "get_init_inputs() no longer returns what it returned before "
                                                  "the candidate was imported")]
        if self._take_inputs(values) != (self._inputs if values else self._shapes):
            return [Violation("task_fingerprint", "get_inputs() no longer makes the inputs it made before the "
                                                  "candidate was imported")]
        return []
