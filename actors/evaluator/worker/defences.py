"""Hack defences of the sandbox worker (issue 4), always on.

Imported by sandbox_worker.py before any task or candidate code exists, so
that everything here (the audit hook, the copies of timer and comparison
functions, the fingerprints) is taken from an untouched interpreter. Each
check returns Violation values naming the defence that fired; the worker
turns the first one into a reply with ErrorKind Hack and the evaluator
settles the candidate as `hack` with that name in defences_fired.
docs/defences.md says what each defence catches, how, what it costs and what
it cannot catch.

Who calls what: sandbox_worker.py only, from its one thread. Nothing here is
thread-safe; the audit hook runs on whichever thread raises an event.
"""

import contextlib
import ctypes
import gc
import hashlib
import os
import sys
import threading
import time

import torch
import torch.nn.functional as F

# ---------------------------------------------------------------- copies
# Taken before any candidate code runs. The worker compares and times with
# these, and the fingerprints below prove that the public names still point
# at them.
equal = torch.equal
isfinite = torch.isfinite
nan_to_num = torch.nan_to_num
uint8 = torch.uint8
_tensor_type = torch.Tensor
_listdir = os.listdir

try:
    from torch.multiprocessing.reductions import StorageWeakRef as _StorageWeakRef
except ImportError:  # pragma: no cover - every torch this runs on has it
    _StorageWeakRef = None


class Violation:
    """One fired defence: its short name and what the candidate did."""

    __slots__ = ("defence", "reason")

    def __init__(self, defence, reason):
        self.defence = defence
        self.reason = reason

    def __repr__(self):
        return "%s: %s" % (self.defence, self.reason)


# ---------------------------------------------------------------- audit hook

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_PATH_EVENTS = {"os.remove", "os.rename", "os.replace", "os.mkdir", "os.rmdir", "os.chmod", "os.chown",
                "os.link", "os.symlink", "os.truncate", "os.utime", "shutil.rmtree", "shutil.move",
                "shutil.copyfile", "os.chdir"}
_PROCESS_EVENTS = {"os.fork", "os.forkpty", "os.system", "os.exec", "os.posix_spawn", "os.spawn",
                   "subprocess.Popen", "pty.spawn", "os.startfile"}
# Compilers that JIT toolchains (Triton's launcher stub and ptxas) run as
# subprocesses on a candidate's first call: allowed through subprocess.Popen.
# ldconfig, gcc, cc and ld are also what ctypes.util.find_library runs to
# find a shared library (`ldconfig -p`), as CuPy does at import and on its
# first kernel (CUDA-L1 A100 L1-22, L1-31 were settled hack for it).
_TOOLCHAIN = {"ptxas", "nvcc", "nvdisasm", "cuobjdump", "gcc", "g++", "cc", "c++", "clang", "clang++", "ld",
              "ldconfig", "ldconfig.real"}
_GC_EVENTS = {"gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys._current_frames"}
_TRACE_EVENTS = {"sys.setprofile", "sys.settrace"}


class Guard:
    """A sys.addaudithook hook (it cannot be removed once added) that is
    armed only while candidate code runs: its import and construction
    (phase "load") and each call of ModelNew (phase "call"). It refuses, by
    raising PermissionError, and records: writes outside the scratch
    directory (sandbox_filesystem), sockets (sandbox_network), new processes
    and signals to other processes (sandbox_process), reading other
    objects through gc or frames of the worker (introspection), and
    replacing the profiler/tracer during a call (introspection). A candidate
    that catches the PermissionError is still reported: the record is kept
    outside its reach, in this object, and read after the phase ends."""

    def __init__(self, writable_roots, own_files):
        self.phase = None
        self._toolchain_depth = 0
        self._armed = None
        self.violations = []
        self.candidate_file = None
        self._roots = [os.path.realpath(r) for r in writable_roots if r]
        self._own_files = set(own_files)
        self._busy = False
        sys.addaudithook(self._hook)

    def arm(self, phase):
        self.phase = phase
        self._armed = phase

    def disarm(self):
        """Ends a phase; a phase found switched off or changed was tampered
        with by candidate code (worker_integrity)."""
        if self._armed is not None and self.phase != self._armed:
            self.violations.append(Violation("worker_integrity", "the sandbox guard was switched off during "
                                                                 "candidate code"))
        self.phase = None
        self._armed = None

    def take(self):
        v, self.violations = self.violations, []
        return v

    def add_root(self, path):
        """One more writable directory (the candidate's compile-cache entry)."""
        if path and os.path.realpath(path) not in self._roots:
            self._roots.append(os.path.realpath(path))

    @contextlib.contextmanager
    def toolchain(self):
        """While an extension builds (extensions.py): the build tools it
        runs (ninja, compilers, `which`) may start; its files go to a
        writable root as any others."""
        self._toolchain_depth += 1
        try:
            yield
        finally:
            self._toolchain_depth -= 1

    def _refuse(self, defence, reason):
        self.violations.append(Violation(defence, reason))
        raise PermissionError("crucible sandbox: %s refused (%s)" % (reason, defence))

    def _writable(self, path):
        if isinstance(path, int):
            return path > 2 and path not in (3, 4)  # never the protocol pipe
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        p = os.path.realpath(str(path))
        return p == os.devnull or any(p == r or p.startswith(r + os.sep) for r in self._roots)

    @staticmethod
    def _toolchain(args):
        exe = args[0] if args else None
        if exe is None and len(args) > 1 and isinstance(args[1], (list, tuple)) and args[1]:
            exe = args[1][0]
        if isinstance(exe, bytes):
            exe = os.fsdecode(exe)
        return isinstance(exe, str) and os.path.basename(exe) in _TOOLCHAIN

    @staticmethod
    def _program(event, args):
        """What a refused process event would have run, for the reason: ` of
        ['/sbin/ldconfig', '-p']` (the first 120 characters)."""
        what = args[1] if event == "subprocess.Popen" and len(args) > 1 else (args[0] if args else None)
        return " of %s" % repr(what)[:120] if isinstance(what, (str, bytes, list, tuple)) else ""

    def _hook(self, event, args):
        if self.phase is None or self._busy:
            return
        self._busy = True
        try:
            self._check(event, args)
        finally:
            self._busy = False

    def _check(self, event, args):
        if event == "open":
            path, mode, flags = (tuple(args) + (None, None, None))[:3]
            writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                isinstance(flags, int) and flags & _WRITE_FLAGS and mode is None)
            if writes and not self._writable(path):
                self._refuse("sandbox_filesystem", "open(%r, %r) for writing outside the scratch directory" %
                             (path, mode))
        elif event in _PATH_EVENTS:
            for path in args[:2]:
                if isinstance(path, (str, bytes)) and not self._writable(path):
                    self._refuse("sandbox_filesystem", "%s(%r) outside the scratch directory" % (event, path))
        elif event.startswith("socket."):
            self._refuse("sandbox_network", "%s%r" % (event, tuple(args)[:2]))
        elif event == "subprocess.Popen" and (self._toolchain_depth or self._toolchain(args)):
            return
        elif self._toolchain_depth and event in _PROCESS_EVENTS:
            return
        elif event in _PROCESS_EVENTS:
            self._refuse("sandbox_process", "%s%s" % (event, self._program(event, args)))
        elif event in ("os.kill", "os.killpg") and args and args[0] not in (os.getpid(), os.getpgrp(), 0):
            # Killing itself only crashes the worker (crashed, never a pass);
            # a signal to any other process is an escape.
            self._refuse("sandbox_process", "%s%r" % (event, tuple(args)))
        elif event in _GC_EVENTS:
            self._refuse("introspection", "%s during a candidate %s" % (event, self.phase))
        elif event == "sys._getframe" and self.phase == "call":
            # Frames 0 and 1 are this method and _hook; 2 is the code that
            # asked for a frame (3: its caller, for inspect.currentframe()).
            caller = sys._getframe(2)
            names = {caller.f_code.co_filename, caller.f_back.f_code.co_filename if caller.f_back else ""}
            if self.candidate_file in names:
                self._refuse("introspection", "the candidate took a frame object (sys._getframe) during its call")
        elif event in _TRACE_EVENTS and self.phase == "call":
            self._refuse("introspection", "%s during a candidate call" % event)


# ---------------------------------------------------------------- fingerprints

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
        "defences": globals(),
        "defences.Guard": dict(vars(Guard)),
    }
    if torch.cuda.is_available():
        spaces["torch.cuda"] = _public(torch.cuda)
        spaces["torch.cuda.Event"] = dict(vars(torch.cuda.Event))
        spaces["torch.cuda.Stream"] = dict(vars(torch.cuda.Stream))
    return spaces


def _defence_for(space, name):
    if space in ("time", "torch.cuda.Event", "torch.cuda.Stream") or (space == "torch.cuda" and name in _TIMERS):
        return "timer_integrity"
    if space in ("worker", "worker.state", "defences", "defences.Guard", "gc"):
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


class ModelFingerprint:
    """The reference model object: its modules' attribute identities and its
    parameters' and buffers' values. A candidate that reaches the reference
    instance and swaps its forward, a submodule or its weights is caught
    (reference_integrity).

    Like with like: a reference may update its own buffers in forward
    (BatchNorm in training mode updates its running statistics on every
    call), so the buffers' baseline is re-taken after each of the
    reference's own calls (rebase_buffers) and checked after each of the
    candidate's (buffer_violations): what the reference does to itself is
    allowed, what candidate code does to the reference between two of its
    calls is not. Parameters never change in a no-grad forward and are
    checked against the values taken before the candidate loaded."""

    def __init__(self, model):
        self._model = model
        self._stale = False
        self._buffers = self._take_buffers()
        self._base = self._take(True)

    def _take_buffers(self):
        if not isinstance(self._model, torch.nn.Module):
            return None
        buffers = list(self._model.buffers())
        return digest(buffers) if buffers else None

    def _take(self, values):
        if not isinstance(self._model, torch.nn.Module):
            return {"obj": dict(vars(self._model))}
        out = {}
        for name, m in self._model.named_modules():
            out[name] = {k: v for k, v in vars(m).items() if k not in ("_parameters", "_buffers")}
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
            return [Violation("reference_integrity", "reference model buffers changed outside its own calls")]
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


# ---------------------------------------------------------------- tensors

def _storage(t):
    return t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage().untyped()


def _bytes_view(t):
    """All of a tensor's storage as uint8 (views included: the whole buffer)."""
    return torch.tensor([], dtype=uint8, device=t.device).set_(_storage(t))


# The digest is a keyed sum of 64-bit words, computed where the tensor lives:
# copying every output to the host for a CPU hash made a KernelBench
# evaluation on an H200 five times slower (64 MiB per output, 64 outputs per
# evaluation). Each word is multiplied by a pseudo-random odd weight of its
# position and the products summed modulo 2^64 (integer sums are exact, so the
# order of the device's reduction does not matter); the sums of each chunk of
# _DIGEST_CHUNK words, with the shape and dtype, go through blake2b on the
# host. Two different tensors collide with probability about 2^-64 unless the
# difference is built against the weights (docs/defences.md).
_DIGEST_CHUNK = 1 << 20  # words per weighted sum: bounds the temporary memory (8 MiB)
_DIGEST_KEY = 0x2545F4914F6CDD1D
_digest_weights = {}  # device -> int64 weights of positions 0.._DIGEST_CHUNK-1


def _int64(x):
    """A 64-bit pattern as the signed value torch's int64 arithmetic takes."""
    x &= (1 << 64) - 1
    return x - (1 << 64) if x >> 63 else x


def _weights(device):
    w = _digest_weights.get(device)
    if w is None:
        x = torch.arange(_DIGEST_CHUNK, dtype=torch.int64, device=device) * _int64(0x9E3779B97F4A7C15) + _DIGEST_KEY
        x = x ^ ((x >> 30) & ((1 << 34) - 1))  # splitmix64's mixing, logical shifts
        x = x * _int64(0xBF58476D1CE4E5B9)
        x = x ^ ((x >> 27) & ((1 << 37) - 1))
        w = _digest_weights[device] = x | 1
    return w


def _words(t):
    """t's bytes in logical order as int64 words, the last one zero-padded."""
    b = t.detach().reshape(-1).view(uint8)
    pad = -b.numel() % 8
    if pad or b.storage_offset() % 8:
        b = torch.cat([b, b.new_zeros(pad)])
    return b.view(torch.int64)


def digest(tensors):
    """A 64-bit digest of tensors' values (bytes in logical order), shapes
    and dtypes; one host synchronization per call."""
    h = hashlib.blake2b(digest_size=8)
    sums = []
    for t in tensors:
        if type(t) is not _tensor_type:
            h.update(repr(t).encode())
            continue
        h.update(repr((tuple(t.shape), str(t.dtype))).encode())
        if t.numel():
            w = _weights(t.device)
            sums += [(c * w[:c.numel()]).sum() for c in _words(t).split(_DIGEST_CHUNK)]
    for s in (torch.stack([s.to(sums[0].device) for s in sums]).tolist() if sums else []):
        h.update((s & ((1 << 64) - 1)).to_bytes(8, "little"))
    return int.from_bytes(h.digest(), "little")


def protected_storages(models, modules):
    """Storage addresses of models' parameters and buffers and of tensors
    that modules hold as globals: state, never poisoned."""
    out = set()
    for m in models:
        if isinstance(m, torch.nn.Module):
            for t in list(m.parameters()) + list(m.buffers()):
                out.add(_storage(t).data_ptr())
    for mod in modules:
        for v in list(vars(mod).values()):
            if type(v) is _tensor_type:
                out.add(_storage(v).data_ptr())
    return out


def tensors_of(x):
    if type(x) is _tensor_type:
        return [x]
    if isinstance(x, (tuple, list)):
        return [t for t in x if type(t) is _tensor_type]
    return []


def poison(xs, protected):
    """Fill the whole storage of each tensor with 0xFF bytes (NaN for every
    floating type, -1 for integers) before it is freed, so that a candidate
    that returns memory it did not write (torch.empty landing on a freed
    reference output, a cached buffer) returns poison."""
    for t in xs:
        if type(t) is not _tensor_type or t.is_sparse or t.device.type == "meta":
            continue
        s = _storage(t)
        if s.nbytes() == 0 or s.data_ptr() in protected:
            continue
        _bytes_view(t).fill_(255)


def holds_poison(t):
    """True when a floating output contains all-ones words: the poison
    pattern, which no arithmetic produces (a computed NaN is canonical)."""
    if type(t) is not _tensor_type or not t.is_floating_point() or not t.numel():
        return False
    ints = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}.get(t.element_size())
    if ints is None:
        return False
    return bool((t.detach().reshape(-1).view(ints) == -1).any())


def materialized(t):
    """'' when t is a plain, dense tensor with real memory behind it; else why not."""
    if type(t) is not _tensor_type:
        return "is %s, not exactly torch.Tensor" % type(t).__name__
    if t.layout != torch.strided:
        return "has layout %s, not strided" % t.layout
    if t.device.type == "meta":
        return "is a meta tensor (no storage)"
    if t.numel() and _storage(t).data_ptr() == 0:
        return "has no storage"
    return ""


def _bits(t):
    return t.detach().reshape(-1).contiguous().view(uint8)


def same_values(a, b):
    """Bitwise equality (NaN-safe) of two input lists."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if type(x) is _tensor_type or type(y) is _tensor_type:
            if type(x) is not type(y) or x.shape != y.shape or x.dtype != y.dtype:
                return False
            if x.numel() and not equal(_bits(x), _bits(y)):
                return False
        elif x != y:
            return False
    return True


def output_violations(out):
    """Hack-level problems of a candidate's output: a tensor subclass (lazy
    or otherwise: exact_output_type) or a tensor without real memory behind
    it (materialized_storage). Other wrong types are plain incorrect."""
    for t in out if isinstance(out, (tuple, list)) else [out]:
        if isinstance(t, torch.Tensor) and type(t) is not _tensor_type:
            return [Violation("exact_output_type", "output is %s, a subclass of torch.Tensor" % type(t).__name__)]
        if type(t) is _tensor_type:
            why = materialized(t)
            if why:
                return [Violation("materialized_storage", "output " + why)]
    return []


def storage_refs(tensors, skip):
    """Weak references to the storages of a call's outputs, to check after
    the worker has dropped its own references that the candidate kept none."""
    out = []
    if _StorageWeakRef is None:
        return out
    for t in tensors:
        s = _storage(t)
        if s.data_ptr() in skip:
            continue
        try:
            out.append(_StorageWeakRef(s))
        except (AttributeError, TypeError, RuntimeError):
            out.append(_StorageWeakRef(t.storage()))
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


# ---------------------------------------------------------------- threads

def native_threads():
    try:
        return len(_listdir("/proc/self/task"))
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


# ---------------------------------------------------------------- CUDA limits

class CudaLimits:
    """cudaLimitPersistingL2CacheSize through the CUDA runtime that torch
    already loaded (found in /proc/self/maps): a candidate that reserves L2
    for persisting accesses changes it, and the worker sets it back to 0
    before every call. value() is -1 where the runtime cannot be found."""

    _PERSISTING_L2 = 0x06

    def __init__(self):
        self._lib = None
        try:
            with open("/proc/self/maps") as maps:
                path = next(line.split()[-1] for line in maps if "libcudart" in line)
            self._lib = ctypes.CDLL(path)
        except (OSError, StopIteration):
            self._lib = None

    def value(self):
        if self._lib is None:
            return -1
        v = ctypes.c_size_t(0)
        return v.value if self._lib.cudaDeviceGetLimit(ctypes.byref(v), self._PERSISTING_L2) == 0 else -1

    def reset(self):
        if self._lib is not None:
            self._lib.cudaDeviceSetLimit(self._PERSISTING_L2, ctypes.c_size_t(0))
