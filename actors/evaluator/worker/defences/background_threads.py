"""background_threads: work on threads that outlive the call (promises
filled later, a thread pool started at import).

Catches: Python and native (/proc/self/task) thread counts before and
after every candidate call and around loading. Allows: native threads that
libraries start on a first call (OpenMP, CUDA helpers: new_threads with
native_too=False there). Cannot catch: a thread that finishes before the
call returns (then cpu_wall_consistency on CPU, in evaluate.cpp).
"""

import threading

from .copies import listdir
from .violation import Violation

NAMES = ("background_threads",)
CASES = ("tests/hacks/cpu/background_thread.py", "tests/hacks/cpu/thread_pool_at_import.py")


def native_threads():
    try:
        return len(listdir("/proc/self/task"))
    except OSError:
        return 0


def thread_census():
    return threading.active_count(), native_threads()


def new_threads(before, native_too=True):
    """Violation when threads started since `before` are still alive.
    native_too=False counts Python threads only: libraries start their pools
    (OpenMP, CUDA helpers) lazily on the first call that needs them."""
    py, native = thread_census()
    if py > before[0] or (native_too and native > before[1]):
        return [Violation("background_threads", "threads still running after the candidate returned: python "
                                                "%d->%d, native %d->%d" % (before[0], py, before[1], native))]
    return []
