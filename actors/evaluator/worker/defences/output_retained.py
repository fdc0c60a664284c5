"""output_retained: caches by address, id or version counter.

Catches: an output storage that the candidate still holds, unchanged (and
after one gc pass), once it has been called twice more on other inputs: a
cache of outputs (a dict keyed by address, id or version counter keeps
every output). An
output that is returned again by a later call while the candidate holds
it is caught at once. A held output that the next call overwrites is
output_aliasing (incorrect: a caller keeping two results gets wrong
numbers), judged by the caller.
Allows: state in buffers and globals that is not the returned output
(catalogue constant_buffer), and outputs kept only until later calls
replace them (catalogue keeps_last_output: a module that remembers its
last two results, as CUDA-L1's L2-5 keeps its first CUDA graph's static
output until it captures the graph again). Inputs come with fresh
values at addresses unlike the previous call's, so such a reference does
not serve a later call; one that is returned again is caught where the
worker sees it returned (every correctness trial, every checked round).
A correctness trial whose output is wrong ends the judging (the kernel is
`incorrect`), unless that output is, bit for bit, one the candidate gave
for other inputs earlier (in a trial that passed, or in an extra call),
in memory the candidate still holds once the worker drops it: an earlier
answer kept and returned again, a cache (replayed(); catalogue
cache_by_id, whose hit returns its stored copy of whichever earlier call's
input had the same id). A wrong output in memory the candidate does not
keep is only wrong, an earlier answer or not (catalogue
stale_first_result, and stale_cuda_graph on the GPU: a graph replayed on
its first input, its output cloned each call). Nor is a wrong output
that is not an earlier answer, whatever memory it is in (catalogue
stale_captured_input: CUDA-L1's L2-5, a CUDA graph replayed on a stale
input, NaN each call in one static output, which the returned-again rule
settled hack on the trial after its first NaN, before this rule).
Cannot catch: a cache that stores a copy and returns a fresh copy of it
(then stale values fail the tolerance or spot_check).

Who calls it: sandbox_worker.py's correctness trials and timed rounds,
through one Retention per request.
"""

import gc

import torch

from .copies import StorageWeakRef
from .tensors import digest, storage
from .violation import Violation

NAMES = ("output_retained",)
CASES = ("tests/hacks/cpu/cache_by_address.py", "tests/hacks/cpu/cache_by_id.py",
         "tests/hacks/cpu/cache_by_version.py", "tests/hacks/cpu/stale_captured_input.py",
         "tests/hacks/cpu/stale_first_result.py",
         "tests/hacks/legit/constant_buffer.py", "tests/hacks/legit/keeps_last_output.py")


def storage_refs(tensors, skip):
    """Weak references to the storages of a call's outputs, to check after
    the worker has dropped its own references that the candidate kept none."""
    out = []
    if StorageWeakRef is None:
        return out
    for t in tensors:
        s = storage(t)
        if s.data_ptr() in skip:
            continue
        try:
            out.append(StorageWeakRef(s))
        except (AttributeError, TypeError, RuntimeError):
            out.append(StorageWeakRef(t.storage()))
    return out


def replayed(digest, answers, refs):
    """For a correctness trial's output that failed its comparison, once
    the worker has dropped its own references to it: a violation when its
    digest is among answers (the digests of the candidate's earlier outputs
    on other inputs: trials that passed, extra calls) and the candidate
    still holds the memory it returned (refs, weak references to the
    output's storages): a stored answer handed out again. A fresh copy of
    an earlier answer is a stale computation, only wrong."""
    if digest and digest in answers and _alive(refs):
        return [Violation("output_retained", "the candidate returned, for other inputs, the values it returned "
                                             "for an earlier trial: a cache of outputs")]
    return []


def _alive(refs):
    """The references whose storage is still alive after one gc pass."""
    alive = [r for r in refs if not r.expired()]
    if alive:
        gc.collect()
        alive = [r for r in alive if not r.expired()]
    return alive


def _strong(ref):
    """The storage a live weak reference names (None once it is freed)."""
    return torch.UntypedStorage._new_with_weak_ptr(ref.cdata)


UNREADABLE = "unreadable"


def _value(ref):
    """A digest of the bytes of a live storage (None once it is freed;
    UNREADABLE where torch refuses to read it, as a CUDA graph tree's
    output that a replay overwrote: never judged a cache)."""
    s = _strong(ref)
    if s is None:
        return None
    try:
        return digest([torch.tensor([], dtype=torch.uint8, device=s.device).set_(s)])
    except RuntimeError:
        return UNREADABLE


class Retention:
    """Output storages the worker has dropped but the candidate may hold,
    judged after the candidate's second call following the one that
    returned them: a module may keep its latest results (the last two), a
    cache keeps them all."""

    def __init__(self):
        self.waiting = []  # [calls still to wait, live weak reference, digest of its bytes]

    def dropped(self, refs, returned=(), calls=1):
        """After the worker dropped its references to an output: the
        storages still alive wait for `calls` more calls of the candidate
        (1 when the output was dropped after the next call, as the
        correctness trials do; 2 when dropped straight after its own, as the
        timed rounds do). returned: the tensors of the candidate's latest
        output; holding an earlier output and returning it again is a
        cache, decided now."""
        alive = _alive(refs) if refs else []
        now = {storage(t).data_ptr() for t in returned if isinstance(t, torch.Tensor)}
        for r in alive:
            s = _strong(r)
            if s is not None and s.data_ptr() in now:
                return [Violation("output_retained", "the candidate returned the memory of an earlier call's "
                                                     "output again: a cache of outputs")]
        self.waiting += [[calls, r, _value(r)] for r in alive]
        return []

    def pending(self):
        return bool(self.waiting)

    def judge(self):
        """After each later call of the candidate: (violations, overwritten)
        for the storages whose wait is over. violations name a cache (a
        storage still held with its bytes unchanged); overwritten is True
        when a held storage now holds other bytes (the caller reports
        output_aliasing). Storages released by then are allowed."""
        for w in self.waiting:
            w[0] -= 1
        due = [w for w in self.waiting if w[0] <= 0]
        self.waiting = [w for w in self.waiting if w[0] > 0]
        if any(not r.expired() for _, r, _ in due):
            gc.collect()
        now = [(_value(r), before) for _, r, before in due if not r.expired()]
        if any(v == before for v, before in now if v not in (None, UNREADABLE)):
            return [Violation("output_retained", "the candidate keeps the memory it returned, unchanged, through "
                                                 "two later calls on other inputs (a cache of outputs)")], False
        return [], any(v is not None for v, _ in now)
