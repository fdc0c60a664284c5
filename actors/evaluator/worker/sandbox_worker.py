"""crucible sandbox worker: executes what the C++ evaluator asks, returns raw numbers.

Started by actors/evaluator/sandbox.cpp inside the sandbox (own process group,
rlimits, scratch directory as cwd, namespaces where the kernel allows). It
reads length-prefixed SandboxMessage requests (messages/sandbox.fbs) on fd 3
and writes one reply per request on fd 4. It decides nothing: seeds, the
order of each round, how many rounds, tolerances' verdicts and every
statistic belong to the evaluator. stdout and stderr go to a log file.

Reference and candidate run in this one process (paired rounds need the same
inputs). They share no mutable global state across calls: before every call
the worker sets thread count, grad mode and backend flags to the same values,
and reports any change the candidate's call made (state_changed). The hack
defences (defences/, docs/defences.md) are armed before the candidate is
imported; a defence that fires ends the request with ErrorKind Hack and its
name in Reply.defence.
"""

import contextlib
import copy
import gc
import linecache
import os
import resource
import struct
import sys
import time
import traceback
import types

# The worker's timeline (seconds since this interpreter started), reported
# with the task's load so that an evaluation's load_task phase splits into
# what the start still owed and the task's own work (issue 18).
_STARTED = time.time()
TIMELINE = {}


def _mark(name):
    TIMELINE[name] = time.time() - _STARTED


# Copies taken before any candidate code exists (issue 4 extends these checks).
_perf_counter = time.perf_counter
_thread_time = time.thread_time
_fd_in = os.fdopen(3, "rb", buffering=0)
_fd_out = os.fdopen(4, "wb", buffering=0)
_pread = os.pread


def _open_schedstat():
    """This thread's scheduler statistics (cpu_ns wait_ns slices), opened once
    here, on the thread that runs every model call, so that reading it later
    opens nothing; None where the kernel does not provide it."""
    try:
        return os.open("/proc/thread-self/schedstat", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None


_schedstat_fd = _open_schedstat()


def _runqueue_wait():
    """Seconds this thread has spent runnable but waiting for a CPU."""
    if _schedstat_fd is None:
        return 0.0
    try:
        return int(_pread(_schedstat_fd, 128, 0).split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


def _open_stat():
    """This thread's /proc stat line, opened once here for the same reason."""
    try:
        return os.open("/proc/thread-self/stat", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None


_stat_fd = _open_stat()
_getrusage, _RUSAGE_THREAD = resource.getrusage, resource.RUSAGE_THREAD


def _host_state():
    """(core, run-queue wait s, involuntary context switches) of this thread
    now: where the measuring thread ran and what the scheduler took from it,
    read around each timing request (issue 18: a reward that moves between
    passes of the same jobs, checked against the worker's own CPU)."""
    core = -1
    if _stat_fd is not None:
        try:
            fields = _pread(_stat_fd, 1024, 0).rsplit(b")", 1)[1].split()
            core = int(fields[36])  # field 39, "processor"; fields[0] is field 3
        except (OSError, IndexError, ValueError):
            pass
    return core, _runqueue_wait(), _getrusage(_RUSAGE_THREAD).ru_nivcsw


def host_info(before, after):
    """The reply's line for one timing request (evaluate.cpp, take_timing_host)."""
    return "timing_host cores=%d,%d runqueue_wait_s=%.6f involuntary_switches=%d" % (
        before[0], after[0], after[1] - before[1], after[2] - before[2])

import flatbuffers  # noqa: E402
import torch  # noqa: E402
import torch.utils.cpp_extension  # noqa: E402,F401  (imported before any candidate: extensions.py wraps it)

from crucible.sandbox import (  # noqa: E402
    CompileCandidate,
    CorrectnessTrials,
    ErrorKind,
    LoadCandidate,
    LoadTask,
    Reply,
    Request,
    SandboxMessage,
    TimedRounds,
    TrialOutcome,
)

import defences as D  # noqa: E402  (worker/defences/, beside this file: one rule a module)
import ahead_builds  # noqa: E402  (worker/ahead_builds.py: builds the pool's first call misses)
import extensions  # noqa: E402  (worker/extensions.py: inline builds, once)
import settings  # noqa: E402  (worker/settings.py: the own-settings rule)
import private_tmp  # noqa: E402  (worker/private_tmp.py: what Python writes under /tmp stays the worker's)
import stream_fence  # noqa: E402  (worker/stream_fence.py: the device clock sees every stream)
import cache_flush  # noqa: E402  (worker/cache_flush.py: each timed call starts with an empty L2)
import reference_placement  # noqa: E402  (worker/reference_placement.py: the reference's tensors placed after the candidate's)

_mark("imported")
# Past this point a spare's start runs on the GPU (CUDA's context, the sleep's
# calibration, the warm-up calls): the evaluator pauses a spare that has
# this file in its scratch directory while another worker is timed, and a
# spare that gets here while one is timed waits (warm_up, .hold;
# worker_pool.hpp, quiet_scope).
open(".imported", "w").close()

# torch.compile's compile workers would be forked processes, which the guard
# refuses inside candidate code: compile in this process instead.
os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")

_MAX_FRAME = 64 << 20


class WorkerError(Exception):
    def __init__(self, kind, text, task_fault=False, defence=""):
        super().__init__(text)
        self.kind = kind
        self.text = text
        self.task_fault = task_fault
        self.defence = defence


def raise_violations(violations):
    """Ends the request as a hack when any defence fired."""
    if violations:
        raise WorkerError(ErrorKind.ErrorKind.Hack, "; ".join(v.reason for v in violations[:3]),
                          defence=violations[0].defence)


def memory_defence(e):
    """'rlimit_memory' when an exception is the address-space limit refusing
    an allocation (MemoryError, torch's allocator message), else ''."""
    text = str(e).lower()
    if isinstance(e, MemoryError) or "can't allocate memory" in text or "out of memory" in text:
        return "rlimit_memory"
    return ""


def _exc_text(prefix):
    text = "".join(traceback.format_exception(*sys.exc_info())[-12:])
    return (prefix + ": " + text)[-4000:]


# ---------------------------------------------------------------- framing

def _read_exact(n):
    chunks = []
    while n > 0:
        b = _fd_in.read(n)
        if not b:
            return None
        chunks.append(b)
        n -= len(b)
    return b"".join(chunks)


def read_frame():
    head = _read_exact(4)
    if head is None:
        return None
    (size,) = struct.unpack("<I", head)
    if size > _MAX_FRAME:
        raise SystemExit("frame too large")
    return _read_exact(size)


def write_frame(data):
    _fd_out.write(struct.pack("<I", len(data)) + bytes(data))


# ---------------------------------------------------------------- state

class State:
    def __init__(self):
        self.device = "cpu"
        self.threads = 1
        self.task = None
        self.model = None
        self.candidate = None
        self.cand_model = None
        self.init_seed = 0
        self.task_file = ""
        self.fingerprint = None      # D.Fingerprint: torch, time, worker
        self.task_fingerprint = None  # D.TaskFingerprint
        self.model_fingerprint = None  # D.ModelFingerprint of the reference
        self.protected = set()       # storages of both models' parameters: never poisoned
        self.cuda_limits = None      # D.CudaLimits on CUDA
        self.candidate_calls = 0     # untimed candidate calls so far
        self.sleep_cycles_per_s = 0.0  # torch.cuda._sleep's rate on this GPU (CUDA only)
        self.dispatch_s = []         # the reference's recent host dispatch times (device clock)
        self.cand_settings = None    # the candidate's own settings (settings.py), applied to its calls
        self.fence = None            # stream_fence.StreamFence (CUDA), taken before any task exists
        self.cache_flush = None      # cache_flush.CacheFlush (CUDA), taken before any task exists
        self.stateful = False        # the reference keeps tensors in plain attributes (module_state.py)
        self.returns_state = False   # ... and returns one of them (KernelBench L3-34)
        self.answers = set()         # digests of the candidate's earlier outputs: passed trials, extra calls


S = State()
_PROTECTED_STATE = ("device", "threads", "task", "model", "init_seed", "task_file", "fingerprint",
                    "task_fingerprint", "model_fingerprint", "fence", "cache_flush", "stateful", "returns_state")


def protected_state():
    state = {k: getattr(S, k) for k in _PROTECTED_STATE}
    if S.fence is not None:  # its stream list, which the fence never changes
        state["fence.streams"] = S.fence.streams
    return state


# Armed only while candidate code runs; the only writable place is the scratch
# directory (cwd, HOME and TMPDIR of this process).
GUARD = D.Guard([os.getcwd(), os.environ.get("TMPDIR"), os.environ.get("HOME")])
# /tmp as the worker's own, for task and candidate code alike (private_tmp.py).
private_tmp.install(os.path.join(os.getcwd(), "tmp"), lambda: GUARD.roots)
# Every Python thread started from here on has its origin recorded
# (background_threads: a first call may leave torch's own threads).
D.watch_origins()
# load_inline/load for task and candidate code (extensions.py); where it
# builds is set by LoadCandidate or CompileCandidate.
BUILDS = extensions.Builds(GUARD)


def unpoisoned():
    """Storages never poisoned: both models' parameters and buffers, and
    what is state right now (module_state.py): the reference's tensors in
    plain attributes, and the candidate's too where the task returns its
    state (its output is then its state until its next call)."""
    if not S.stateful:
        return S.protected
    state = D.state_storages(S.model_fingerprint.state_attributes if S.model_fingerprint else
                             D.tensor_attributes(S.model))
    if S.returns_state and S.cand_model is not None:
        state |= D.state_storages(D.tensor_attributes(S.cand_model))
    return S.protected | state


def reference_alone(calls):
    """Runs calls() (reference calls the candidate has no counterpart of)
    and puts the reference's state back as it was: a stateful reference
    (module_state.py) stays in step with the candidate."""
    saved = D.state_snapshot(S.model, D.tensor_attributes(S.model)) if S.stateful else None
    try:
        return calls()
    finally:
        D.state_restore(saved)
        reference_called(S.model)


def integrity(values):
    """Every fingerprint taken before the candidate loaded, checked now."""
    return (S.fingerprint.check() + S.task_fingerprint.check(values) +
            S.model_fingerprint.check(values))


def reset_global_state(own=None):
    """The default process-wide settings before every call, draw of inputs
    and comparison; with `own` (a candidate call), then the candidate's own
    settings (settings.py says which and why)."""
    settings.reset(S.threads, S.cuda_limits, own)


def snapshot_state():
    return settings.snapshot(D.native_threads(), S.cuda_limits)


def end_candidate_code(before):
    """After candidate code ran: what it changed that is not its own to
    change (settings.changes), its own settings kept for its next calls, and
    the defaults back in place for whatever the worker does next."""
    after = snapshot_state()
    S.cand_settings = settings.own_of(after)
    reset_global_state()
    return settings.changes(before, after)


# ---------------------------------------------------------------- modules

def make_module(name, source, what):
    filename = "<%s>" % name
    try:
        code = compile(source, filename, "exec")
    except SyntaxError:
        raise WorkerError(ErrorKind.ErrorKind.Syntax, _exc_text(what + " does not parse"))
    lines = source.splitlines(True)
    linecache.cache[filename] = (len(source), None, lines, filename)
    module = types.ModuleType(name)
    module.__file__ = filename
    sys.modules[name] = module
    try:
        exec(code, module.__dict__)
    except SystemExit:
        raise
    except BaseException as e:  # noqa: B902
        text = _exc_text(what + " raised while loading")
        if "Error building extension" in str(e) or "cpp_extension" in text and "ninja" in text:
            raise WorkerError(ErrorKind.ErrorKind.Compile, text)
        raise WorkerError(ErrorKind.ErrorKind.Import, text)
    return module


def require(module, names, what, task_fault=False):
    missing = [n for n in names if not hasattr(module, n)]
    if missing:
        raise WorkerError(ErrorKind.ErrorKind.MissingSymbol,
                          "%s does not define %s" % (what, ", ".join(missing)), task_fault)


def to_device(xs):
    return [x.to(S.device) if isinstance(x, torch.Tensor) else x for x in xs]


def make_inputs(seed):
    """The task's get_inputs() under seed, on the evaluation's device.

    On CUDA, get_inputs() runs with the GPU as torch's default device, so its
    torch.randn(...) draws on the GPU: KernelBench's tasks make inputs of
    16M elements, and drawing them on the CPU and copying them over took
    about 0.1 s a round, most of an evaluation's time on an H200. The values
    differ from a CPU draw of the same seed; their distribution does not."""
    torch.manual_seed(seed)
    try:
        if S.device.startswith("cuda"):
            with torch.device(S.device):
                return to_device(list(S.task.get_inputs()))
        return to_device(list(S.task.get_inputs()))
    except BaseException:
        raise WorkerError(ErrorKind.ErrorKind.Runtime, _exc_text("task get_inputs() raised"), True)


def copy_inputs(xs):
    """A second, identical set of inputs for the other model of a round:
    tensors cloned (the same values, separate memory, so neither model can
    change what the other reads), everything else deep-copied."""
    return [x.clone() if isinstance(x, torch.Tensor) else copy.deepcopy(x) for x in xs]


def task_init_inputs():
    torch.manual_seed(S.init_seed)
    return list(S.task.get_init_inputs())


def build(cls, what, task_fault, own=None):
    """cls(*get_init_inputs()) on the evaluation's device, under the
    defaults, or under `own` (the candidate's settings)."""
    torch.manual_seed(S.init_seed)
    try:
        init = list(S.task.get_init_inputs())
    except BaseException:
        raise WorkerError(ErrorKind.ErrorKind.Init, _exc_text("task get_init_inputs() raised"), True)
    reset_global_state(own)
    try:
        model = cls(*init)
        if isinstance(model, torch.nn.Module):
            model = model.to(S.device)
        return model
    except SystemExit:
        raise
    except BaseException:
        raise WorkerError(build_failed_kind(ErrorKind.ErrorKind.Init), _exc_text(what + " constructor raised"),
                          task_fault)


def build_failed_kind(otherwise):
    """Compile when an extension build failed in this worker (in __init__
    or a forward), else `otherwise`: a kernel that does not build is a
    compile_error wherever it asked for the build."""
    return ErrorKind.ErrorKind.Compile if BUILDS.failed else otherwise


# ---------------------------------------------------------------- requests

def on_load_task(req):
    _mark("request")
    lap, steps = time.time(), []

    def step(name):
        nonlocal lap
        now = time.time()
        steps.append((name, now - lap))
        lap = now

    S.device = req.Device().decode() if req.Device() else "cpu"
    S.threads = max(1, req.Threads())
    S.init_seed = req.InitSeed()
    reset_global_state()
    S.task = make_module(req.ModuleName().decode(), req.Source().decode(), "task")
    require(S.task, ["Model", "get_inputs", "get_init_inputs"], "task", task_fault=True)
    step("module")
    S.model = build(S.task.Model, "task Model", True)
    S.stateful = bool(D.tensor_attributes(S.model))
    step("model")
    probes = []

    def probe():
        for i in range(req.ProbeSeedsLength()):
            inputs = make_inputs(req.ProbeSeeds(i))
            out, seconds = call(S.model, inputs, "reference")
            if type(out) is not torch.Tensor and not (
                    isinstance(out, (tuple, list)) and all(type(o) is torch.Tensor for o in out)):
                raise WorkerError(ErrorKind.ErrorKind.Runtime,
                                  "task Model returned %s, not tensors" % type(out).__name__, True)
            probes.append(seconds)
            if S.stateful and not S.returns_state:
                state = D.state_storages(D.tensor_attributes(S.model))
                S.returns_state = any(D.storage(t).data_ptr() in state for t in D.tensors_of(out))
            D.poison(D.tensors_of(out) + D.tensors_of(inputs), unpoisoned())
            del out, inputs

    reference_alone(probe)  # the candidate's first call meets the reference as built
    if S.device.startswith("cuda") and S.cuda_limits is None:
        S.cuda_limits = D.CudaLimits()
        calibrate_sleep()
        S.fence = stream_fence.StreamFence()
    step("probes")
    # Everything the candidate could change, taken before it exists.
    S.task_file = "<%s>" % req.ModuleName().decode()
    S.protected = D.protected_storages([S.model], [S.task])
    S.task_fingerprint = D.TaskFingerprint(S.task, task_init_inputs, make_inputs,
                                           req.ProbeSeeds(0) if req.ProbeSeedsLength() else 0)
    S.model_fingerprint = D.ModelFingerprint(S.model)
    S.fingerprint = D.Fingerprint(globals(), protected_state)
    S.fingerprint.seal()
    step("fingerprints")
    info = ["torch=" + torch.__version__, "python=%d.%d" % sys.version_info[:2], "pid=%d" % os.getpid()]
    info += timeline_info(steps)
    if S.device.startswith("cuda"):
        info.append("device_name=" + torch.cuda.get_device_name(0))
        info.append("stream_fence=%s:%d" % (S.fence.kind, len(S.fence.streams)))
    return {"info": info, "ref_s": probes, "cand_s": []}


def install_builds(lookup, build_root):
    """load_inline/load, for everything this worker runs from now on, import
    from lookup or build into build_root (a writable root): extensions.py."""
    os.makedirs(build_root, exist_ok=True)
    GUARD.add_root(build_root)
    BUILDS.configure(lookup, build_root)
    BUILDS.install()


def on_load_candidate(req):
    own = os.path.join(os.getcwd(), "extensions")
    install_builds(req.ExtensionsDir().decode() if req.ExtensionsDir() else own, own)
    name = req.ModuleName().decode()
    GUARD.candidate_file = "<%s>" % name
    census = D.thread_census()
    GUARD.arm("load")
    try:
        S.candidate = make_module(name, req.Source().decode(), "candidate")
        require(S.candidate, ["ModelNew"], "candidate")
        # What the module set at import is the candidate's own (settings.py).
        S.cand_settings = settings.own_of(snapshot_state())
        S.cand_model = build(S.candidate.ModelNew, "candidate ModelNew", False, S.cand_settings)
    except WorkerError:
        GUARD.disarm()
        raise_violations(GUARD.take())
        raise
    finally:
        GUARD.disarm()
    # The constructor's settings are the candidate's own too; other state a
    # load changes is put back and not judged: the calls are.
    S.cand_settings = settings.own_of(snapshot_state())
    reset_global_state()
    if S.device.startswith("cuda"):
        reference_placement.refresh(S.model)
    S.protected = D.protected_storages([S.model, S.cand_model], [S.task, S.candidate])
    raise_violations(GUARD.take() + D.new_threads(census, torch_threads=True) + integrity(values=True))
    # Everything alive now (torch, task, candidate) moves to gc's permanent
    # generation, so that the collections before each timing request and in
    # the retained-output check scan only what the rounds made: a full
    # collection with torch loaded took 70 ms a request on CPU, about 1 ms
    # after the freeze.
    gc.collect()
    gc.freeze()
    info = BUILDS.info()
    described = settings.describe(S.cand_settings)
    if described:
        info.append(described)
    return {"info": info}


@contextlib.contextmanager
def gpu_as_seen_by_candidates():
    """Stage 1 of a compile on a GPU node's CPU pool: the questions kernels
    ask before they build (`torch.cuda.is_available()`, the device count,
    its capability) answered as the timed worker's GPU will answer them, so
    that a build guarded by them is reached here too. Only where the
    evaluator builds for CUDA (TORCH_CUDA_ARCH_LIST) and this torch has CUDA."""
    arch = os.environ.get("TORCH_CUDA_ARCH_LIST", "").split(";")[0].split()[:1]
    if not arch or torch.version.cuda is None:
        yield
        return
    major, _, minor = arch[0].partition(".")
    answers = {"is_available": lambda: True, "device_count": lambda: 1, "current_device": lambda: 0,
               "get_device_capability": lambda *a: (int(major), int(minor or 0))}
    saved = {k: getattr(torch.cuda, k) for k in answers}
    for k, v in answers.items():
        setattr(torch.cuda, k, v)
    try:
        yield
    finally:
        for k, v in saved.items():
            setattr(torch.cuda, k, v)


def on_compile(req):
    """The CPU compile pool (compile_cache.hpp), no GPU visible. Stage 0:
    import the candidate; a build that fails there is the compile error.
    Stage 1 (with the task): construct ModelNew and call it once on the
    task's inputs, on the meta device where torch has it, so that
    extensions built in __init__ or on a first forward are built here, ahead
    of the GPU; then the load_inline calls of the source that call did not
    reach, where their arguments are the module's plain data
    (ahead_builds.py). What the call raises does not matter (a CUDA kernel cannot
    run here, it only has to be built) and the evaluator ignores stage 1's
    outcome: a build that failed is kept in the cache as a failure, which
    the timing worker then reports as the compile error."""
    os.environ["TORCH_EXTENSIONS_DIR"] = req.ExtensionsDir().decode()
    if BUILDS.build_root is None:
        install_builds(req.ExtensionsDir().decode(), req.ExtensionsDir().decode())
    name = req.ModuleName().decode()
    if req.Stage() == 0:
        make_module(name, req.Source().decode(), "candidate")
        return {"info": BUILDS.info()}
    task = make_module("crucible_task", req.TaskSource().decode(), "task")
    candidate = sys.modules.get(name) or make_module(name, req.Source().decode(), "candidate")
    meta = torch.device("meta") if hasattr(torch.device, "__enter__") else None
    try:
        with meta if meta is not None else contextlib.nullcontext(), gpu_as_seen_by_candidates():
            torch.manual_seed(0)
            model = candidate.ModelNew(*task.get_init_inputs())
            model(*task.get_inputs())
    except Exception:  # noqa: BLE001  (expected: kernels cannot run without their device)
        pass
    # Calls the meta forward did not reach (it read a value or branched on
    # the device first), found in the source: ahead_builds.py.
    ahead_builds.build_ahead(req.Source().decode(), vars(candidate), torch.utils.cpp_extension.load_inline)
    if BUILDS.failed:
        raise WorkerError(ErrorKind.ErrorKind.Compile, BUILDS.failed[0])
    return {"info": BUILDS.info()}


def as_outputs(out):
    if isinstance(out, (tuple, list)):
        return list(out), type(out)
    return [out], None


def tolerances(req):
    """The request's tolerance table: (atol, rtol) and {dtype name: (atol, rtol)}."""
    by_dtype = {}
    for i in range(req.ByDtypeLength()):
        t = req.ByDtype(i)
        by_dtype[t.Dtype().decode()] = (t.Atol(), t.Rtol())
    return (req.Atol(), req.Rtol()), by_dtype


def compare(ref_out, cand_out, tol):
    """Structure check, non-finite check, max errors: raw facts, no verdict.
    tol: tolerances(req); each output is held to its reference's dtype's."""
    fallback, by_dtype = tol
    refs, rkind = as_outputs(ref_out)
    cands, ckind = as_outputs(cand_out)
    for r in refs:
        if type(r) is not torch.Tensor:
            raise WorkerError(ErrorKind.ErrorKind.Runtime,
                              "task Model returned %s, not a tensor" % type(r).__name__, True)
    if (rkind is None) != (ckind is None) or len(refs) != len(cands):
        return "output structure differs: reference %s of %d, candidate %s of %d" % (
            rkind.__name__ if rkind else "tensor", len(refs),
            ckind.__name__ if ckind else type(cand_out).__name__, len(cands)), False, 0.0, 0.0
    max_abs, max_ratio, nonfinite = 0.0, 0.0, False
    for i, (r, c) in enumerate(zip(refs, cands)):
        if type(c) is not torch.Tensor:
            return "output %d is %s, not exactly torch.Tensor" % (i, type(c).__name__), False, 0.0, 0.0
        if c.shape != r.shape or c.dtype != r.dtype or c.device != r.device:
            return "output %d is %s %s on %s, expected %s %s on %s" % (
                i, tuple(c.shape), c.dtype, c.device, tuple(r.shape), r.dtype, r.device), False, 0.0, 0.0
        cd, rd = c.detach().double(), r.detach().double()
        if not bool(torch.isfinite(cd).all()):
            nonfinite = True
        diff = (cd - rd).abs()
        if diff.numel():
            diff = torch.nan_to_num(diff, nan=float("inf"))
            max_abs = max(max_abs, float(diff.max()))
            atol, rtol = by_dtype.get(str(r.dtype).replace("torch.", ""), fallback)
            max_ratio = max(max_ratio, float((diff / (atol + rtol * rd.abs())).max()))
    return "", nonfinite, max_abs, max_ratio


def call(model, inputs, who):
    """One untimed call of the reference (or of a model the worker trusts)."""
    reset_global_state()
    try:
        if S.device.startswith("cuda"):
            torch.cuda.synchronize()
        t0 = _perf_counter()
        out = model(*inputs)
        if S.device.startswith("cuda"):
            torch.cuda.synchronize()
        reference_called(model)
        return out, _perf_counter() - t0
    except (WorkerError, SystemExit):
        raise
    except BaseException:
        raise WorkerError(ErrorKind.ErrorKind.Runtime, _exc_text(who + " forward raised"), who == "reference")


def reference_called(model):
    """After the reference's own call: its buffers as it left them are the
    baseline (defences.ModelFingerprint, like with like)."""
    if model is S.model and S.model_fingerprint is not None:
        S.model_fingerprint.rebase_buffers()


def call_candidate(inputs):
    """One untimed call of ModelNew (correctness trials) under the guard and
    a profiler that notices any call into the task's code (reference_call:
    calling the reference, or falling back to it in an except branch)."""
    reset_global_state(S.cand_settings)
    hits, task_file = [], S.task_file

    def profiler(frame, event, arg):
        if event == "call" and not hits and frame.f_code.co_filename == task_file:
            hits.append(frame.f_code.co_name)

    census = D.thread_census()
    failure = None
    building = BUILDS.seconds
    sys.setprofile(profiler)
    GUARD.arm("call")
    try:
        if S.device.startswith("cuda"):
            torch.cuda.synchronize()
        t0 = _perf_counter()
        out = S.cand_model(*inputs)
        if S.device.startswith("cuda"):
            torch.cuda.synchronize()
        # An extension built on a first forward is not the call's time (the
        # executability bound would call it a hang).
        seconds = _perf_counter() - t0 - (BUILDS.seconds - building)
    except SystemExit:
        # The worker ends; the evaluator sees it gone mid-request (crashed,
        # process_exit), never a pass.
        raise
    except BaseException as e:  # noqa: B902
        failure = WorkerError(build_failed_kind(ErrorKind.ErrorKind.Runtime), _exc_text("candidate forward raised"),
                              defence=memory_defence(e))
    finally:
        GUARD.disarm()
        tampered = sys.getprofile() is not profiler
        sys.setprofile(None)
    violations = GUARD.take()
    if tampered:
        violations.append(D.Violation("introspection", "the candidate replaced the profiler during its call"))
    if hits:
        violations.append(D.Violation("reference_call", "the candidate called the task's %s()" % hits[0]))
    if torch.get_num_threads() != S.threads:  # before new_threads: a bigger pool starts native threads
        violations.insert(0, D.Violation("thread_count", "the candidate set %d threads; the reference gets %d" %
                                         (torch.get_num_threads(), S.threads)))
    S.candidate_calls += 1
    first = S.candidate_calls == 1
    raise_violations(violations + D.new_threads(census, torch_threads=first, native_pools=first) +
                     S.fingerprint.check() + S.model_fingerprint.buffer_violations())
    if failure is not None:
        raise failure
    return out, seconds


def failed(trial):
    """A trial the evaluator settles `incorrect` (evaluate.cpp's
    trial_failed): wrong structure, NaN or Inf, or an error past the
    tolerance."""
    return not trial["structure_ok"] or trial["nonfinite"] or not trial["max_ratio"] <= 1.0


def failed_trial(seed, defence, why):
    """A trial that is `incorrect` for a reason the comparison does not see
    (evaluate.cpp: structure_ok false, the defence named)."""
    return dict(seed=seed, structure_ok=False, structure_error=why, nonfinite=False, max_abs=0.0, max_ratio=0.0,
                ref_s=0.0, cand_s=0.0, changed=[], defence=defence, ref_digest=0, cand_digest=0)


def check_output(seed, pristine_in, cand_in, cand_out, tol, poison_output=True, saved=None):
    """Judges a candidate output that exists while no reference output does:
    exact type and real storage, inputs unmodified (bitwise against
    pristine_in, a copy made before the call: a kernel that writes its
    inputs is `incorrect`, input_mutation; the reference never sees the
    candidate's tensors, so it deceives nothing), then the reference runs on
    pristine_in and the two are compared. Every tensor of the round is then
    poisoned, the output too unless poison_output is False (on_correctness
    keeps it for the aliasing check). saved (a timed round's spot check): a
    stateful reference's state from before the round's calls, put back
    first, so that the reference recomputes the step the candidate took.
    Returns the trial and weak references to the output's storage (none for
    the candidate's state where the task returns its state: it is judged
    after the next call); the caller drops its own references and hands
    these to its Retention (output_retained.py)."""
    raise_violations(D.output_violations(cand_out))
    if not D.same_values(cand_in, pristine_in):
        trial = failed_trial(seed, "input_mutation", "the candidate changed its inputs in place (seed %d): a kernel "
                                                     "must leave its inputs as it found them" % seed)
        return trial, []
    if saved is not None:
        D.state_restore(saved)
    ref_out, ref_s = call(S.model, pristine_in, "reference")
    cands = D.tensors_of(cand_out)
    defence = ""
    if any(D.holds_poison(c) for c in cands):
        structure_error, nonfinite, max_abs, max_ratio = (
            "output holds poisoned memory: the candidate returned memory it did not write", False, 0.0, 0.0)
        defence = "poisoned_memory"
    else:
        structure_error, nonfinite, max_abs, max_ratio = compare(ref_out, cand_out, tol)
    trial = dict(seed=seed, structure_ok=structure_error == "", structure_error=structure_error,
                 nonfinite=bool(nonfinite), max_abs=max_abs, max_ratio=max_ratio, ref_s=ref_s, cand_s=0.0,
                 changed=[], defence=defence, ref_digest=D.digest(D.tensors_of(ref_out)),
                 cand_digest=D.digest(cands))
    inputs = D.tensors_of(pristine_in) + D.tensors_of(cand_in)
    skip = S.protected | {D.storage(t).data_ptr() for t in inputs}
    if poison_output:  # judged now: the candidate's state, if the task returns state, is not a cache
        skip = skip | unpoisoned()
    refs = D.storage_refs(cands, skip)
    D.poison(D.tensors_of(ref_out) + (cands if poison_output else []) + inputs, unpoisoned())
    return trial, refs


def call_again(seed, inspect=None, answers=None):
    """One more untimed call of the candidate on fresh inputs (the
    reference taking the same step where the task is stateful), for the
    judgements that need a later call: output aliasing and retention.
    inspect() runs after the call, before its output is poisoned; its
    result is returned. answers (the correctness trials' S.answers): the
    output's digest is added to it (output_retained.replayed)."""
    extra_in = make_inputs(seed)
    before = snapshot_state()
    extra_out, _ = call_candidate(extra_in)
    end_candidate_code(before)
    if answers is not None:
        answers.add(D.digest(D.tensors_of(extra_out)))
    found = inspect() if inspect else None
    if S.stateful:  # the reference takes the same step (module_state.py)
        ref_out, _ = call(S.model, extra_in, "reference")
        D.poison(D.tensors_of(ref_out), unpoisoned())
        del ref_out
    D.poison(D.tensors_of(extra_out) + D.tensors_of(extra_in), unpoisoned())
    del extra_out, extra_in
    return found


def aliasing_trial(seed, earlier, how):
    """The failed trial of an output that a later call (on seed) overwrote."""
    return failed_trial(seed, "output_aliasing",
                        "the output of %s %s when the candidate was called again on other inputs (seed %d): it "
                        "returns memory that a later call overwrites" % (earlier, how, seed))


def on_correctness(req):
    """Each trial: the candidate runs first on a copy of the seed's inputs,
    so that the reference's output for them does not exist while it runs;
    then check_output.

    Output aliasing: each trial's output is kept, unpoisoned, until the
    next trial's call has returned (on other inputs), and must then still
    hold what it held: an output that a later call overwrites (a CUDA
    graph's static output buffer, a preallocated result) is `incorrect`
    (output_aliasing), since a caller that keeps two results gets wrong
    numbers. Then it is poisoned and dropped; one that the candidate still
    holds, unchanged, after the call after that is a cache of outputs
    (output_retained, hack), one that call overwrites is output_aliasing,
    one released by then is allowed (output_retained.py).

    A trial whose output is wrong (failed()) ends the request: the kernel
    is `incorrect`, and no later call is judged, unless that output is one
    the candidate returned earlier for other inputs, in a trial that passed
    or an extra call (output_retained.py's replayed: a cache, hack)."""
    tol = tolerances(req)
    trials = []
    held = None  # the previous trial's inputs, alive while this trial's are made: fresh addresses
    kept = []  # [seed, tensors, digest, weak refs] of the previous trial's output, or empty
    retention = D.Retention()

    def release(returned=()):
        """Poisons and drops the kept output; the storages the candidate
        still holds wait for its next call (retention)."""
        _, tensors, _, refs = kept
        D.poison(tensors, unpoisoned())
        kept.clear()
        del tensors
        raise_violations(retention.dropped(refs, returned))

    def overwritten(seed):
        """The kept output no longer holds what it held, or torch refuses to
        read it (a CUDA graph's output that the next replay overwrote:
        torch.compile's mode "reduce-overhead"): a failed trial. Then the
        outputs dropped earlier that the candidate holds (retention)."""
        violations, changed = retention.judge()
        raise_violations(violations)
        if changed:
            return aliasing_trial(seed, "an earlier trial", "changed")
        if not kept:
            return None
        try:
            if D.digest(kept[1]) == kept[2]:
                return None
            how = "changed"
        except RuntimeError as e:
            how = "could no longer be read (%s)" % str(e).strip().splitlines()[0][:160]
        return aliasing_trial(seed, "seed %d" % kept[0], how)

    for i in range(req.SeedsLength()):
        seed = req.Seeds(i)
        ref_in = make_inputs(seed)
        cand_in = copy_inputs(ref_in)
        held = None
        before = snapshot_state()
        cand_out, cand_s = call_candidate(cand_in)
        # Thread counts are call_candidate's to judge (background_threads:
        # a first call may leave torch's threads).
        changed = [c for c in end_candidate_code(before) if not c.startswith(("python_threads", "native_threads"))]
        aliased = overwritten(seed)
        if aliased:
            trials.append(aliased)
            break
        if kept:
            release(D.tensors_of(cand_out))
        trial, refs = check_output(seed, ref_in, cand_in, cand_out, tol, poison_output=False)
        trial.update(cand_s=cand_s, changed=changed)
        trials.append(trial)
        if failed(trial):
            del cand_out  # the worker's last reference: does the candidate hold what it returned?
            raise_violations(D.replayed(trial["cand_digest"], S.answers, refs))
            break
        S.answers.add(trial["cand_digest"])
        kept[:] = [seed, D.tensors_of(cand_out), D.digest(D.tensors_of(cand_out)), refs]
        del cand_out
        held = (ref_in, cand_in)
        del ref_in, cand_in
    # Up to two more calls, on other inputs: one for the last trial's
    # output (aliasing), one for the outputs the candidate still holds.
    for extra in range(2):
        if not trials or failed(trials[-1]) or not (kept if extra == 0 else retention.pending()):
            break
        seed = trials[-1]["seed"] ^ (0x5BD1E995 + extra)
        aliased = call_again(seed, lambda: overwritten(seed), S.answers)
        if aliased:
            trials.append(aliased)
        elif kept:
            release()
    if kept:  # an aliased output is held by design: incorrect, not a cache
        D.poison(kept[1], unpoisoned())
        kept.clear()
    del held
    raise_violations(integrity(values=True))
    return {"trials": trials, "info": BUILDS.info()}


# The device clock (CUDA): before each measured call the GPU sleeps
# (torch.cuda._sleep, taken before any candidate exists) while the host
# queues the whole call, so that the events around it time the device's
# work, not the host's dispatch: on a shared host, dispatch speed moves
# between processes and over time by up to 1.8x, and with it the speedup of
# any launch-bound task (tools/gpu/launch_jitter_probe.py, docs/benchmarks.md).
_cuda_sleep = None
SLEEP_MARGIN = 1.5          # the sleep outlasts the reference's dispatch by this factor
SLEEP_MIN_S, SLEEP_MAX_S = 50e-6, 0.02


def calibrate_sleep():
    """Measures torch.cuda._sleep's cycles per second with events (median of 5)."""
    global _cuda_sleep
    _cuda_sleep = torch.cuda._sleep
    cycles, rates = 1_000_000, []
    for _ in range(5):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        _cuda_sleep(cycles)
        end.record()
        end.synchronize()
        rates.append(cycles / max(1e-6, start.elapsed_time(end) / 1e3))
    S.sleep_cycles_per_s = sorted(rates)[2]


def sleep_cycles():
    """The same sleep before either model's call in a request: SLEEP_MARGIN
    times the slowest of the reference's last dispatches. A candidate that
    dispatches for longer than that leaves the GPU idle, and the events see
    the gap: its dispatch is not hidden beyond what the reference's is."""
    dispatch = max(S.dispatch_s) if S.dispatch_s else 1e-3
    return int(S.sleep_cycles_per_s * min(SLEEP_MAX_S, max(SLEEP_MIN_S, SLEEP_MARGIN * dispatch)))


def timed_call(model, inputs, events, cpu, sleep=0, fenced=False):
    """One timed call: (output, wall seconds, clock seconds). fenced (the
    device clock): every pool stream's work inside the call is counted
    (stream_fence.py)."""
    reset_global_state(S.cand_settings if model is S.cand_model else None)
    if cpu:
        # Wall time without the time spent waiting for a CPU: other processes
        # preempting this one are not the candidate's doing, while time it
        # spends blocked (waiting on work done elsewhere) still counts, for
        # the cpu_wall_consistency check.
        w0 = _runqueue_wait()
        c0 = _thread_time()
        t0 = _perf_counter()
        out = model(*inputs)
        t1 = _perf_counter()
        c1 = _thread_time()
        return out, max(t1 - t0 - (_runqueue_wait() - w0), c1 - c0), c1 - c0
    if events:
        if S.cache_flush is not None:
            S.cache_flush.flush()  # before the sync: done before the clocks start
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        fence = S.fence if fenced else None
        if sleep:
            _cuda_sleep(sleep)
        t0 = _perf_counter()
        start.record()
        if fence is not None:
            fence.open(start)
        out = model(*inputs)
        if fence is not None:
            fence.close(torch.cuda.current_stream())
        end.record()
        dispatched = _perf_counter()
        torch.cuda.synchronize()
        t1 = _perf_counter()
        if sleep and model is S.model:  # the fence's host work included
            S.dispatch_s = (S.dispatch_s + [dispatched - t0])[-8:]
        return out, t1 - t0, start.elapsed_time(end) / 1e3
    t0 = _perf_counter()
    out = model(*inputs)
    return out, _perf_counter() - t0, 0.0


def on_timed(req):
    gc.collect()
    gc.disable()
    # No buffer digests between timed calls (host work that warmed the
    # reference's memory alone moved a BatchNorm identity to 0.99): the
    # reference's buffers are re-based at its next untimed call, and what a
    # candidate does to them in between shows in the spot checks' outputs.
    S.model_fingerprint.forget_buffers()
    try:
        before = _host_state()
        r = timed_rounds(req)
        r["info"] = [host_info(before, _host_state())]
        return r
    finally:
        gc.enable()


def timed_rounds(req):
    events = S.device.startswith("cuda")
    cpu = bool(req.ProcessCpu()) and not events
    # Device clock: every round sleeps first but the audit rounds, which are
    # timed as before (the evaluator checks their wall against their events).
    device_clock = events and bool(req.DeviceClock())
    if device_clock and not S.dispatch_s:
        def calibrate():
            for _ in range(3):  # the reference's dispatch time sets the sleep
                D.poison(D.tensors_of(timed_call(S.model, make_inputs(req.Seeds(0)), True, False, sleep_cycles(),
                                                 True)[0]), unpoisoned())

        reference_alone(calibrate)
    ref_s, cand_s, ref_e, cand_e, changed, trials = [], [], [], [], [], []
    tol = tolerances(req)
    held = None  # the previous round's inputs, alive while this round's are made: fresh addresses
    retention = D.Retention()  # checked rounds' outputs the candidate held (output_retained.py)

    def judged(found, seed):
        """A checked round's output the candidate still holds, unchanged,
        two calls later is a cache (hack); one those calls overwrote fails
        its spot check (output_aliasing seen only while timed)."""
        violations, changed = found
        raise_violations(violations)
        if changed:
            trials[-1] = aliasing_trial(seed, "seed %d" % trials[-1]["seed"], "changed")

    for i in range(req.SeedsLength()):
        seed = req.Seeds(i)
        checked = i < req.CheckLength() and bool(req.Check(i))
        # Inputs are made in run order (the second model's are a copy of the
        # first's), so that neither model's inputs are systematically the
        # more recently touched; the evaluator balances the orders.
        if req.CandidateFirst(i):
            cand_in = make_inputs(seed)
            ref_in = copy_inputs(cand_in)
            order = [("candidate", S.cand_model, cand_in), ("reference", S.model, ref_in)]
        else:
            ref_in = make_inputs(seed)
            cand_in = copy_inputs(ref_in)
            order = [("reference", S.model, ref_in), ("candidate", S.cand_model, cand_in)]
        held = None
        times = {}
        cand_out, outs = None, {}
        saved = D.state_snapshot(S.model, S.model_fingerprint.state_attributes) if checked and S.stateful else None
        slept = device_clock and not (i < req.AuditLength() and req.Audit(i))
        sleep = sleep_cycles() if slept else 0
        for who, model, inputs in order:
            before = snapshot_state()
            candidate = who == "candidate"
            if candidate:
                GUARD.arm("call")
            try:
                out, wall, ev = timed_call(model, inputs, events, cpu, sleep, device_clock)
            except SystemExit:
                raise
            except BaseException:
                GUARD.disarm()
                if candidate:
                    raise_violations(GUARD.take())
                raise WorkerError(ErrorKind.ErrorKind.Runtime, _exc_text(who + " forward raised"),
                                  who == "reference", memory_defence(sys.exc_info()[1]))
            finally:
                GUARD.disarm()
            # The same checks after either model's call, so that whichever
            # runs second starts after the same host work: checks after the
            # candidate alone delayed the reference only in candidate-first
            # rounds, which order balancing cannot cancel.
            violations = GUARD.take()
            if candidate:
                diffs = end_candidate_code(before)
                raise_violations(violations)
                for d in diffs:
                    if d not in changed:
                        changed.append(d)
            else:
                # The host work of end_candidate_code: a snapshot and a reset.
                settings.changes(before, snapshot_state())
                reset_global_state()
            if checked:
                # Both outputs live until both calls are done: keeping the
                # candidate's alone made the reference, when second, alone
                # allocate cold memory (identity at 1.01 on CPU). The
                # reference's is poisoned at once all the same: kept memory,
                # no result, so that a candidate running after it finds
                # nothing to steal (catalogue: steal_checked_round).
                if not candidate:
                    D.poison(D.tensors_of(out), unpoisoned())
                outs[who] = out
            else:
                # Poisoned before it is freed: memory the next call gets back holds no result.
                D.poison(D.tensors_of(out), unpoisoned())
            times[who] = (wall, ev)
            del out
        if retention.pending():  # an earlier checked round's output that the candidate held
            judged(retention.judge(), seed)
        if checked:
            cand_out = outs.pop("candidate")
            D.poison(D.tensors_of(outs.pop("reference")), unpoisoned())
            trial, refs = check_output(seed, make_inputs(seed), cand_in, cand_out, tol, saved=saved)
            del cand_out
            raise_violations(retention.dropped(refs, calls=2) + S.fingerprint.check())
            trials.append(trial)
        D.poison(D.tensors_of(ref_in) + D.tensors_of(cand_in), unpoisoned())
        held = (ref_in, cand_in)
        ref_s.append(times["reference"][0])
        cand_s.append(times["candidate"][0])
        ref_e.append(times["reference"][1])
        cand_e.append(times["candidate"][1])
        del ref_in, cand_in
    del held
    for k in range(2):  # the last checked rounds' outputs, still held: more calls decide
        if not retention.pending():
            break
        extra = req.Seeds(req.SeedsLength() - 1) ^ (0x5BD1E995 + k)
        judged(call_again(extra, retention.judge), extra)
    raise_violations(integrity(values=False))
    r = {"ref_s": ref_s, "cand_s": cand_s, "changed": changed, "trials": trials}
    if events:
        r["ref_e"], r["cand_e"] = ref_e, cand_e
    if cpu:
        r["ref_c"], r["cand_c"] = ref_e, cand_e
    return r


HANDLERS = {
    Request.Request.LoadTask: (LoadTask.LoadTask, on_load_task),
    Request.Request.LoadCandidate: (LoadCandidate.LoadCandidate, on_load_candidate),
    Request.Request.CompileCandidate: (CompileCandidate.CompileCandidate, on_compile),
    Request.Request.CorrectnessTrials: (CorrectnessTrials.CorrectnessTrials, on_correctness),
    Request.Request.TimedRounds: (TimedRounds.TimedRounds, on_timed),
}


# ---------------------------------------------------------------- replies

def _strings(b, items):
    offs = [b.CreateString(s) for s in items]
    b.StartVector(4, len(offs), 4)
    for o in reversed(offs):
        b.PrependUOffsetTRelative(o)
    return b.EndVector()


def _doubles(b, items):
    b.StartVector(8, len(items), 8)
    for x in reversed(items):
        b.PrependFloat64(float(x))
    return b.EndVector()


def _trial(b, t):
    err = b.CreateString(t["structure_error"])
    changed = _strings(b, t["changed"])
    defence = b.CreateString(t.get("defence", ""))
    TrialOutcome.Start(b)
    TrialOutcome.AddSeed(b, t["seed"])
    TrialOutcome.AddStructureOk(b, t["structure_ok"])
    TrialOutcome.AddStructureError(b, err)
    TrialOutcome.AddNonfinite(b, t["nonfinite"])
    TrialOutcome.AddMaxAbsError(b, t["max_abs"])
    TrialOutcome.AddMaxToleranceRatio(b, t["max_ratio"])
    TrialOutcome.AddRefSeconds(b, t["ref_s"])
    TrialOutcome.AddCandSeconds(b, t["cand_s"])
    TrialOutcome.AddStateChanged(b, changed)
    TrialOutcome.AddDefence(b, defence)
    TrialOutcome.AddRefDigest(b, t.get("ref_digest", 0))
    TrialOutcome.AddCandDigest(b, t.get("cand_digest", 0))
    return TrialOutcome.End(b)


def encode_reply(seq, ok, kind=0, error="", task_fault=False, r=None, defence=""):
    r = r or {}
    b = flatbuffers.Builder(1024)
    err = b.CreateString(error)
    defence_str = b.CreateString(defence)
    trials = None
    if "trials" in r:
        offs = [_trial(b, t) for t in r["trials"]]
        b.StartVector(4, len(offs), 4)
        for o in reversed(offs):
            b.PrependUOffsetTRelative(o)
        trials = b.EndVector()
    vecs = {k: _doubles(b, r[k]) for k in ("ref_s", "cand_s", "ref_e", "cand_e", "ref_c", "cand_c") if k in r}
    changed = _strings(b, r["changed"]) if "changed" in r else None
    info = _strings(b, r["info"]) if "info" in r else None
    Reply.Start(b)
    Reply.AddOk(b, ok)
    Reply.AddErrorKind(b, kind)
    Reply.AddError(b, err)
    Reply.AddTaskFault(b, task_fault)
    Reply.AddDefence(b, defence_str)
    if trials is not None:
        Reply.AddTrials(b, trials)
    if "ref_s" in vecs:
        Reply.AddRefSeconds(b, vecs["ref_s"])
        Reply.AddCandSeconds(b, vecs["cand_s"])
    if "ref_e" in vecs:
        Reply.AddRefEventSeconds(b, vecs["ref_e"])
        Reply.AddCandEventSeconds(b, vecs["cand_e"])
    if "ref_c" in vecs:
        Reply.AddRefCpuSeconds(b, vecs["ref_c"])
        Reply.AddCandCpuSeconds(b, vecs["cand_c"])
    if changed is not None:
        Reply.AddStateChanged(b, changed)
    if info is not None:
        Reply.AddInfo(b, info)
    reply = Reply.End(b)
    SandboxMessage.Start(b)
    SandboxMessage.AddSeq(b, seq)
    SandboxMessage.AddReply(b, reply)
    b.Finish(SandboxMessage.End(b), file_identifier=b"CRSB")
    return b.Output()


def install_torch_patches():
    """What torch patches into itself on a candidate's first torch.compile,
    applied before any fingerprint is taken, so that the fingerprints hold
    torch as torch.compile leaves it: TorchDynamo replaces
    torch.nn.Module.__init__ and __setstate__ with wrappers that tag new
    modules (torch/_dynamo/mutation_guard.py). Without this, a torch.compile
    candidate was settled hack by function_integrity (CUDA-L1 A100 L2-3).
    What it allows: torch's own wrappers, installed by the worker. A
    candidate's replacement of the same names is still a changed
    fingerprint. A torch without TorchDynamo (Debian's 1.13) has nothing
    to install."""
    try:
        from torch._dynamo.mutation_guard import install_generation_tagging_init
    except ImportError:
        return
    install_generation_tagging_init()


def warm_up():
    """Before the first request, while the worker waits as a warm spare
    (worker_pool.hpp): torch's own patches installed, the GPU initialised
    and the device clock's sleep calibrated, before any task or candidate
    exists. It first waits while the evaluator times another worker (the
    file .hold in the scratch directory, written after .imported above:
    worker_pool.hpp, quiet_scope)."""
    while os.path.exists(".hold"):
        time.sleep(0.01)
    install_torch_patches()
    if os.environ.get("CUDA_VISIBLE_DEVICES") and torch.cuda.is_available():
        torch.zeros(1, device="cuda")
        S.cuda_limits = D.CudaLimits()
        calibrate_sleep()
        S.fence = stream_fence.StreamFence()
        S.cache_flush = cache_flush.CacheFlush()
        # What a task's first model and call would otherwise pay (cuBLAS,
        # cuDNN and the RNG initialised, a module moved to the GPU), paid
        # here, where it hides under the evaluation before.
        reset_global_state()
        torch.manual_seed(0)
        with torch.no_grad():
            x = torch.randn(2, 4, 8, 8, device="cuda")
            torch.nn.Linear(8, 8).to("cuda")(x)
            torch.nn.Conv2d(4, 4, 3).to("cuda")(x)
        torch.cuda.synchronize()
        del x
    _mark("ready")


def timeline_info(steps):
    """One line of the worker's start and one of the task's load, seconds:
    "worker imported=.. ready=.. request=.." (since the interpreter started;
    a request before ready means the worker was not warm yet) and
    "load_task model=.. probes=.. fingerprints=..", for the phase_s split of
    bench figures (docs/benchmarks.md)."""
    start = " ".join("%s=%.3f" % (k, TIMELINE[k]) for k in ("imported", "ready", "request") if k in TIMELINE)
    return ["worker " + start, "load_task " + " ".join("%s=%.3f" % kv for kv in steps)]


def main():
    warm_up()
    while True:
        frame = read_frame()
        if frame is None:
            return 0
        msg = SandboxMessage.SandboxMessage.GetRootAs(frame, 0)
        seq, kind = msg.Seq(), msg.RequestType()
        if kind == Request.Request.Shutdown:
            write_frame(encode_reply(seq, True))
            return 0
        if kind not in HANDLERS:
            write_frame(encode_reply(seq, False, ErrorKind.ErrorKind.Protocol, "unknown request %d" % kind))
            continue
        cls, handler = HANDLERS[kind]
        req = cls()
        table = msg.Request()
        req.Init(table.Bytes, table.Pos)
        try:
            result = handler(req)
            write_frame(encode_reply(seq, True, r=result))
        except WorkerError as e:
            write_frame(encode_reply(seq, False, e.kind, e.text, e.task_fault, defence=e.defence))
        except SystemExit as e:
            # Raised by candidate (or task) code mid-request: leave at once, so
            # that the evaluator sees an exit, not a kill after a slow teardown.
            sys.stderr.write("SystemExit(%r) during a request\n" % (e.code,))
            sys.stderr.flush()
            os._exit(e.code if isinstance(e.code, int) and 0 < e.code < 256 else 70)
        sys.stdout.flush()
        sys.stderr.flush()


if __name__ == "__main__":
    sys.exit(main())
