"""output_retained: caches by address, id or version counter.

Catches: weak references to the storages of a call's outputs still alive
after the worker dropped its own references (and one gc pass), and not
overwritten by the next call (that is output_aliasing, in
sandbox_worker.py): the candidate kept its output. Allows: state in buffers
and globals that is not the returned output (catalogue constant_buffer).
Cannot catch: a cache that stores a copy and returns a fresh copy of it
(then stale values fail the tolerance or spot_check).
"""

import gc

from .copies import StorageWeakRef
from .tensors import storage
from .violation import Violation

NAMES = ("output_retained",)
CASES = ("tests/hacks/cpu/cache_by_address.py", "tests/hacks/cpu/cache_by_id.py",
         "tests/hacks/cpu/cache_by_version.py", "tests/hacks/legit/constant_buffer.py")


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


def retained(refs):
    """Violation when any output storage is still alive (after one gc pass)."""
    if not refs or all(r.expired() for r in refs):
        return []
    gc.collect()
    if all(r.expired() for r in refs):
        return []
    return [Violation("output_retained", "the candidate keeps a reference to the memory it returned "
                                         "(a cache of outputs or a reused output buffer)")]
