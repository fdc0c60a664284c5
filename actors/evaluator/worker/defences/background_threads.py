"""background_threads: work on threads that outlive the call (promises
filled later, a thread pool started at import).

Catches: Python threads started during loading or a candidate call that
are still alive after it; from the second call on, any new native
(/proc/self/task) thread; any other thread running candidate code (a
frame of its file) when a load or call ends. Each Python thread's origin
is recorded when it starts (watch_origins wraps threading.Thread.start
before any task or candidate code exists): the file of the first frame
outside threading and concurrent.futures, so that a ThreadPoolExecutor the
candidate submits to is the candidate's.
Allows: on the first call only, native threads (OpenMP, CUDA helpers) and
Python threads whose origin is torch's or Triton's own installed code:
torch.compile leaves its compiler's thread behind on the call that
compiles (CUDA-L1's A100 L2-34, L2-49, L2-72 on torch 2.11). Cannot catch: a
thread that finishes before the call returns (then cpu_wall_consistency on
CPU, in evaluate.cpp); a thread started through _thread directly on the
first call (threading does not list it; the native count does from the
second call on); code compiled under a file name inside torch's package;
work queued on a thread that torch's code started on the first call
(torch._lazy's closure handler, torch.futures) that runs between checks:
a thread found running candidate code after any call is caught.
"""

import importlib.util
import os
import sys
import threading
import weakref

from .copies import listdir
from .violation import Violation

NAMES = ("background_threads",)
CASES = ("tests/hacks/cpu/background_thread.py", "tests/hacks/cpu/thread_pool_at_import.py",
         "tests/hacks/cpu/thread_pool_first_call.py", "tests/hacks/cpu/library_thread_closure.py",
         "tests/hacks/cuda/torch_compile.py")

_ORIGINS = weakref.WeakKeyDictionary()  # threading.Thread -> file of the code that started it
_PLUMBING = (os.path.dirname(threading.__file__) + os.sep + "concurrent" + os.sep, threading.__file__)
_LIBRARIES = []  # package folders whose threads a first call may leave (watch_origins)


def _package_dir(name):
    spec = importlib.util.find_spec(name)  # a top-level spec: the package is not imported
    return os.path.join(os.path.realpath(spec.submodule_search_locations[0]), "") if spec and \
        spec.submodule_search_locations else None


def _starter():
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename.startswith(_PLUMBING):
        frame = frame.f_back
    return frame.f_code.co_filename if frame is not None else "?"


def watch_origins():
    """Called once by sandbox_worker.py at its start, before any task or
    candidate code: records the origin of every Python thread started from
    then on."""
    _LIBRARIES[:] = [d for d in (_package_dir("torch"), _package_dir("triton")) if d]
    start = threading.Thread.start

    def started(self):
        _ORIGINS[self] = _starter()
        return start(self)

    threading.Thread.start = started


def _library(origin):
    return origin is not None and os.path.realpath(origin).startswith(tuple(_LIBRARIES))


def native_threads():
    try:
        return len(listdir("/proc/self/task"))
    except OSError:
        return 0


def thread_census():
    return frozenset(threading.enumerate()), native_threads()


def _running(file):
    """Names of the other threads whose stack holds a frame of `file`."""
    me, names = threading.get_ident(), {t.ident: t.name for t in threading.enumerate()}
    out = []
    for ident, frame in sys._current_frames().items():
        while ident != me and frame is not None and frame.f_code.co_filename != file:
            frame = frame.f_back
        if ident != me and frame is not None:
            out.append(names.get(ident, "thread %d" % ident))
    return out


def new_threads(before, first_call=False, candidate_file=None):
    """Violation when threads started since `before` (a thread_census()) are
    still alive, or when any other thread is running candidate code (its
    file, candidate_file) after the call returned. first_call: native
    threads and library threads are allowed (libraries start their pools
    lazily on the first call that needs them)."""
    started = [t for t in threading.enumerate() if t not in before[0]]
    if first_call:
        started = [t for t in started if not _library(_ORIGINS.get(t))]
    native = native_threads()
    running = _running(candidate_file) if candidate_file else []
    out = []
    if running:
        out.append(Violation("background_threads", "candidate code still running on another thread after the "
                                                   "call returned: " + ", ".join(running)))
    if started or (not first_call and native > before[1]):
        named = ", ".join("%s started in %s" % (t.name, _ORIGINS.get(t, "?")) for t in started)
        out.append(Violation("background_threads", "threads still running after the candidate returned: python "
                                                   "%d->%d%s, native %d->%d" % (
                                                       len(before[0]), threading.active_count(),
                                                       " (%s)" % named if named else "", before[1], native)))
    return out
