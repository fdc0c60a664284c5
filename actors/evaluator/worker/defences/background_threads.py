"""background_threads: work on threads that outlive the call (promises
filled later, a thread pool started at import).

Catches: Python threads started during loading or a candidate call that
are still alive after it; from the second call on, any new native
(/proc/self/task) thread; any other thread running candidate code (a
frame of a file that was not installed before the candidate: its module,
files it wrote, code it compiled) when a load or call ends. Each Python
thread's start is charged to a file (watch_origins wraps
threading.Thread.start before any task or candidate code exists): walking
out from the start call, the first frame of torch's or Triton's code or of
candidate code; threading, concurrent.futures and other installed code in
between are passed through, so that a ThreadPoolExecutor the candidate
submits to, or tqdm called by the candidate, is the candidate's.
Allows: on the first call, native threads (OpenMP, CUDA helpers); while
loading and on the first call, Python threads charged to torch's or
Triton's code: torch.compile's progress bar leaves tqdm's monitor thread
behind on the call that compiles, a constructor's warm-up call or the
first forward (CUDA-L1's A100 L2-34, L2-49, L2-62, L2-72, L2-74, L2-75,
L2-85, L2-91 on torch 2.11; CUDA catalogue torch_compile).
Cannot catch: a thread that finishes before the call returns (then
cpu_wall_consistency on CPU, in evaluate.cpp); a thread
started through _thread directly on the first call (threading does not
list it; the native count does from the second call on); work queued to a
thread that torch's code started on the first call (torch._lazy's closure
handler) that runs wholly between two checks: one found running candidate
code at a check is caught (catalogue library_thread_closure).
"""

import importlib.util
import os
import site
import sys
import sysconfig
import threading
import weakref

from .copies import listdir
from .violation import Violation

NAMES = ("background_threads",)
CASES = ("tests/hacks/cpu/background_thread.py", "tests/hacks/cpu/thread_pool_at_import.py",
         "tests/hacks/cpu/thread_pool_first_call.py", "tests/hacks/cpu/library_thread_closure.py",
         "tests/hacks/cuda/torch_compile.py")

_ORIGINS = weakref.WeakKeyDictionary()  # threading.Thread -> the file its start is charged to
_PLUMBING = (os.path.dirname(threading.__file__) + os.sep + "concurrent" + os.sep, threading.__file__)
_TORCH = []      # torch's and Triton's package folders (watch_origins)
_INSTALLED = []  # the interpreter's and its packages' folders, and the worker's own (watch_origins)
_KIND = {}       # file -> "torch", "installed" or "candidate"


def _package_dir(name):
    spec = importlib.util.find_spec(name)  # a top-level spec: the package is not imported
    return os.path.join(os.path.realpath(spec.submodule_search_locations[0]), "") if spec and \
        spec.submodule_search_locations else None


def _kind(file):
    """torch: torch's or Triton's installed code; installed: the rest of what
    was installed before any candidate existed (the standard library, other
    packages, this worker); candidate: anything else (the candidate's module,
    files it wrote, code it compiled)."""
    kind = _KIND.get(file)
    if kind is None:
        real = os.path.realpath(file) if os.path.isabs(file) else file
        kind = ("torch" if real.startswith(tuple(_TORCH)) else
                "installed" if real.startswith(tuple(_INSTALLED)) or file.startswith("<frozen ") else "candidate")
        _KIND[file] = kind
    return kind


def _starter():
    """The file a thread's start is charged to: walking out from the start
    call, the first frame of torch or of the candidate; installed code in
    between (tqdm's monitor that torch.compile's progress bar starts) is
    passed through."""
    frame, first = sys._getframe(2), None
    while frame is not None:
        file = frame.f_code.co_filename
        if not file.startswith(_PLUMBING):
            first = first or file
            if _kind(file) != "installed":
                return file
        frame = frame.f_back
    return first or "?"


def watch_origins():
    """Called once by sandbox_worker.py at its start, before any task or
    candidate code: records the origin of every Python thread started from
    then on."""
    _TORCH[:] = [d for d in (_package_dir("torch"), _package_dir("triton")) if d]
    paths = sysconfig.get_paths()
    installed = [paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths]
    installed += site.getsitepackages() + [os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]
    _INSTALLED[:] = [os.path.join(os.path.realpath(d), "") for d in installed]
    start = threading.Thread.start

    def started(self):
        _ORIGINS[self] = _starter()
        return start(self)

    threading.Thread.start = started


def native_threads():
    try:
        return len(listdir("/proc/self/task"))
    except OSError:
        return 0


def thread_census():
    return frozenset(threading.enumerate()), native_threads()


def _running_candidate_code():
    """Names of the other threads whose stack holds a frame of candidate code."""
    me, names = threading.get_ident(), {t.ident: t.name for t in threading.enumerate()}
    out = []
    for ident, frame in sys._current_frames().items():
        while ident != me and frame is not None and _kind(frame.f_code.co_filename) != "candidate":
            frame = frame.f_back
        if ident != me and frame is not None:
            out.append("%s (in %s)" % (names.get(ident, "thread %d" % ident), frame.f_code.co_filename))
    return out


def new_threads(before, torch_threads=False, native_pools=False):
    """Violation when threads started since `before` (a thread_census()) are
    still alive, or when any other thread is running candidate code after
    the call returned. torch_threads (loading, the first call): Python
    threads charged to torch's code are allowed, each with its native
    thread; native_pools (the first call): any native thread is (libraries
    start their pools lazily on the first call that needs them)."""
    alive = [t for t in threading.enumerate() if t not in before[0]]
    started = [t for t in alive if not torch_threads or _kind(_ORIGINS.get(t, "?")) != "torch"]
    native = native_threads()
    running = _running_candidate_code()
    out = []
    if running:
        out.append(Violation("background_threads", "candidate code still running on another thread after the "
                                                   "call returned: " + ", ".join(running)))
    if started or (not native_pools and native - before[1] > len(alive) - len(started)):
        named = ", ".join("%s started in %s" % (t.name, _ORIGINS.get(t, "?")) for t in started)
        out.append(Violation("background_threads", "threads still running after the candidate returned: python "
                                                   "%d->%d%s, native %d->%d" % (
                                                       len(before[0]), threading.active_count(),
                                                       " (%s)" % named if named else "", before[1], native)))
    return out
