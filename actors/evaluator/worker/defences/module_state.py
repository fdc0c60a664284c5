"""Module state: tensors a model keeps between calls in plain attributes (an
RNN's hidden state: KernelBench level 3 problems 33 and 34 replace
self.hidden in every forward; 34 returns it), and its buffers. Not a
defence of its own: what the defences need so that a stateful reference is
compared like with like.

A stateful model's output depends on how often it was called. The worker
calls the reference alone (the load's probes, the device clock's dispatch
calibration, a spot check's recomputation) and the candidate alone (the
output aliasing check's extra call); without care the two histories part
and even the identity candidate fails. snapshot() and restore() let the
worker call the reference without advancing it, and keep the two in step.
state_storages() names the storages that are state right now: never
poisoned (poisoned_memory), and a returned state tensor is not a cache
while it is state (output_retained judges it after the next call).

Who calls it: sandbox_worker.py and reference_integrity.py.
"""

import torch

from .tensors import storage

_NOT_STATE = ("_parameters", "_buffers", "_modules")


def _modules(model):
    return list(model.modules()) if isinstance(model, torch.nn.Module) else [model]


def tensor_attributes(model):
    """(object, attribute name) of every tensor held in a plain attribute
    of the model or of one of its submodules."""
    out = []
    for m in _modules(model):
        for k, v in list(vars(m).items()):
            if k not in _NOT_STATE and isinstance(v, torch.Tensor):
                out.append((m, k))
    return out


def state_tensors(attributes):
    """The tensors those attributes hold now (one that is no longer a tensor is left out)."""
    out = []
    for m, k in attributes:
        v = vars(m).get(k)
        if isinstance(v, torch.Tensor):
            out.append(v)
    return out


def state_storages(attributes):
    """Storage addresses of the tensors those attributes hold now."""
    out = set()
    for t in state_tensors(attributes):
        try:
            out.add(storage(t).data_ptr())
        except RuntimeError:
            continue
    return out


def snapshot(model, attributes):
    """Copies of the model's state (attributes and buffers), or None when it has none."""
    buffers = list(model.buffers()) if isinstance(model, torch.nn.Module) else []
    if not attributes and not buffers:
        return None
    with torch.no_grad():
        return ([(m, k, vars(m).get(k).clone()) for m, k in attributes if isinstance(vars(m).get(k), torch.Tensor)],
                [(b, b.clone()) for b in buffers])


def restore(saved):
    """Puts a snapshot back: each attribute holds a fresh copy of its saved
    tensor (the saved one stays intact for another restore), each buffer
    its saved values."""
    if saved is None:
        return
    attributes, buffers = saved
    with torch.no_grad():
        for m, k, t in attributes:
            setattr(m, k, t.clone())
        for b, t in buffers:
            b.copy_(t)
