"""reference_integrity: sabotaging the reference model object (swapping its
forward, zeroing its weights or buffers).

Catches: a change to the reference's modules' attribute identities or to a
digest of its parameters, from before the candidate loads; the digest of
its state (buffers, and tensors in plain attributes: module_state.py) is
re-taken after each of the reference's own calls and checked after each of
the candidate's (catalogue sabotage_reference_state). Allows: the
reference updating its own state in its own calls, like with like
(BatchNorm's running statistics in training mode: KernelBench L2-39 and
every BatchNorm task, whose identity the old rule settled hack; an RNN's
hidden state replaced in every forward: L3-33 and L3-34, settled hack on
the H200 until the state rule; catalogue batchnorm_identity,
rnn_state_identity, rnn_state_returned_identity, at exactly 1.00). Cannot
catch: a change built to keep the digest.
"""

import torch

from .module_state import state_tensors, tensor_attributes
from .tensors import digest
from .violation import Violation

NAMES = ("reference_integrity",)
CASES = ("tests/hacks/cpu/sabotage_reference_weights.py", "tests/hacks/cpu/sabotage_reference_state.py",
         "tests/hacks/legit/batchnorm_identity.py", "tests/hacks/legit/rnn_state_identity.py",
         "tests/hacks/legit/rnn_state_returned_identity.py")

_MISSING = object()


class ModelFingerprint:
    """The reference model object: its modules' attribute identities and its
    parameters' and buffers' values. A candidate that reaches the reference
    instance and swaps its forward, a submodule or its weights is caught
    (reference_integrity).

    Like with like: a reference may update its own state in forward
    (BatchNorm in training mode updates its running statistics on every
    call; an RNN replaces the tensor in self.hidden), so the state's
    baseline is re-taken after each of the reference's own calls
    (rebase_buffers) and checked after each of the candidate's
    (buffer_violations): what the reference does to itself is allowed,
    what candidate code does to the reference between two of its calls is
    not. Which attributes hold state is read once, here (the worker builds
    this after the reference's probes, so lazily made state exists).
    Parameters never change in a no-grad forward and are checked against
    the values taken before the candidate loaded."""

    def __init__(self, model):
        self._model = model
        self._stale = False
        self.state_attributes = tensor_attributes(model)
        self._state_keys = {(id(m), k) for m, k in self.state_attributes}
        self._buffers = self._take_buffers()
        self._base = self._take(True)

    def _take_buffers(self):
        buffers = list(self._model.buffers()) if isinstance(self._model, torch.nn.Module) else []
        state = buffers + state_tensors(self.state_attributes)
        return digest(state) if state else None

    def _is_state(self, m, k):
        return (id(m), k) in self._state_keys

    def _take(self, values):
        if not isinstance(self._model, torch.nn.Module):
            return {"obj": {k: v for k, v in vars(self._model).items() if not self._is_state(self._model, k)}}
        out = {}
        for name, m in self._model.named_modules():
            out[name] = {k: v for k, v in vars(m).items()
                         if k not in ("_parameters", "_buffers") and not self._is_state(m, k)}
            out[name + "._parameters"] = dict(m._parameters)
            out[name + "._buffers"] = dict(m._buffers)
        if values:
            out["values"] = {"digest": digest(list(self._model.parameters()))}
        return out

    def rebase_buffers(self):
        """After a reference call made by the worker: its buffers as it left them."""
        if self._buffers is not None:
            self._buffers = self._take_buffers()
            self._stale = False

    def forget_buffers(self):
        """Before timed rounds, which call the reference without re-basing:
        no buffer check until its next untimed call re-bases them."""
        self._stale = True

    def buffer_violations(self):
        """After candidate code ran: the reference's buffers as its last call left them."""
        if self._buffers is not None and not self._stale and self._take_buffers() != self._buffers:
            return [Violation("reference_integrity", "reference model state (buffers, tensors in attributes) changed outside its own calls")]
        return []

    def check(self, values=True):
        now = self._take(values)
        for part, base in self._base.items():
            if part not in now:
                continue
            cur = now[part]
            for k, v in base.items():
                w = cur.get(k, _MISSING)
                if w is not v and not (part == "values" and w == v):
                    return [Violation("reference_integrity", "reference model %s.%s changed" % (part, k))]
        return self.buffer_violations() if values else []
