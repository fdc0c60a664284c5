"""Inline extensions built once, wherever and however a candidate asks.

Candidates build native code with torch.utils.cpp_extension.load_inline (or
load, from files they wrote): at import, in __init__, or on their first
forward, naming any module, any build_directory and any flags (CUDA-L1's
released kernels do all of these). The worker replaces both functions, for
task and candidate code alike, with the ones below:

- a build is keyed by sha256 over its arguments (the module name, every
  source's text, functions, flags, include paths, with_cuda) and the
  toolchain (CRUCIBLE_TOOLCHAIN, set by the evaluator, and
  TORCH_CUDA_ARCH_LIST), never by build_directory, which is ignored;
- the compile pool (on_compile: import, construct, one call on meta
  tensors, then the calls of the source that call missed: ahead_builds.py)
  reaches the calls ahead of the GPU and builds each into
  ENTRY/<key>, ENTRY being the candidate's entry of the compile cache
  (compile_cache.hpp), under an flock; the timing worker imports from
  ENTRY, which it can read but not write (a candidate cannot plant code in
  the cache), and builds a call the pool could not reach in its own
  scratch directory;
- a build directory that still holds torch's build lock (its file `lock`)
  while this worker holds the key's flock was left by a builder that died
  mid-build (an evaluator killed with SIGKILL: its compile worker dies with
  it, the compilers it started may still run there). torch would wait on
  that lock for ever, so every later evaluation of the kernel timed out:
  the directory is moved aside and removed, and the build starts afresh;
- the toolchain's processes (ninja, the compilers, nvcc, which) run inside
  guard.toolchain(), where the audit hook lets processes start; its files
  land in a directory the guard counts as writable.

What it allows: any name, build_directory, flags or call site. What it does
not change: the built code runs in the worker like any candidate code, so
native code is contained by the sandbox (sandbox.cpp), not here.

Who calls it: sandbox_worker.py (install, counts).
"""

import fcntl
import hashlib
import inspect
import os
import re
import shutil
import time

import torch.utils.cpp_extension as cpp_extension

import private_tmp

_real = {"load_inline": cpp_extension.load_inline, "load": cpp_extension.load}
_IGNORED = {"build_directory", "verbose"}


class Builds:
    """The wrappers of one worker: where builds go, what this process built
    and imported (reported in the evaluation's worker_info)."""

    def __init__(self, guard):
        self.lookup = None      # ENTRY: where finished builds are imported from
        self.build_root = None  # where this process builds (ENTRY in the compile pool)
        self.guard = guard
        self.built = 0      # builds this process ran (0 on a timed evaluation: all came from the cache)
        self.imported = 0   # modules served from the cache
        self.failed = []    # error texts of builds that failed
        self.seconds = 0.0  # spent building and importing (call_candidate leaves it out of a call's time)
        self._modules = {}  # key -> module, for candidates that call load_inline on every forward

    def configure(self, lookup, build_root):
        self.lookup, self.build_root = lookup, build_root

    def install(self):
        cpp_extension.load_inline = self._wrap("load_inline")
        cpp_extension.load = self._wrap("load")

    def _wrap(self, which):
        real = _real[which]
        signature = inspect.signature(real)

        def cached(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            return self._load(which, real, dict(bound.arguments))
        cached.__name__ = which
        cached.__doc__ = real.__doc__
        return cached

    def key(self, which, arguments):
        parts = {k: v for k, v in arguments.items() if k not in _IGNORED}
        if which == "load":  # sources are files: their text, not their paths
            sources = parts["sources"]
            sources = [sources] if isinstance(sources, str) else list(sources)
            texts = []
            for path in sources:
                with open(path, "rb") as f:
                    texts.append((os.path.splitext(path)[1], hashlib.sha256(f.read()).hexdigest()))
            parts["sources"] = texts
        h = hashlib.sha256()
        h.update(repr(sorted((k, repr(v)) for k, v in parts.items())).encode())
        h.update(os.environ.get("CRUCIBLE_TOOLCHAIN", "").encode())
        h.update(os.environ.get("TORCH_CUDA_ARCH_LIST", "").encode())
        return "%s-%s" % (which, h.hexdigest()[:32])

    def _load(self, which, real, arguments):
        key = self.key(which, arguments)
        if key in self._modules:
            return self._modules[key]
        t0 = time.perf_counter()
        try:
            return self._load_new(key, which, real, arguments)
        finally:
            self.seconds += time.perf_counter() - t0

    def _load_new(self, key, which, real, arguments):
        name, python_module = arguments["name"], arguments.get("is_python_module", True)
        found = os.path.join(self.lookup, key)
        if os.path.exists(os.path.join(found, "FAILED")):
            self._cached_failure(name, os.path.join(found, "FAILED"))
        if self.lookup != self.build_root and os.path.exists(os.path.join(found, "DONE")):
            module = cpp_extension._import_module_from_library(name, found, python_module)
            self.imported += 1
            self._modules[key] = module
            return module
        where = os.path.join(self.build_root, key)
        os.makedirs(where, exist_ok=True)
        with open(where + ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            done, failed = os.path.join(where, "DONE"), os.path.join(where, "FAILED")
            if os.path.exists(failed):
                self._cached_failure(name, failed)
            if os.path.exists(done):
                module = cpp_extension._import_module_from_library(name, where, python_module)
                self.imported += 1
            else:
                set_aside_dead_build(where)
                arguments.update(build_directory=where, verbose=False)
                if which == "load":  # files the candidate wrote under its private /tmp (private_tmp.py)
                    sources = arguments["sources"]
                    sources = [sources] if isinstance(sources, str) else sources
                    arguments["sources"] = [private_tmp.resolve(path) for path in sources]
                try:
                    with self.guard.toolchain():
                        module = real(**arguments)
                except Exception as e:  # the compiler's output is in the message
                    # Any failure is kept, a build's or its import's (an
                    # undefined symbol): it would fail the same way again,
                    # and a candidate that catches it and falls back must
                    # not pay a second build on its timed evaluation.
                    text = kept_failure("%s: %s" % (type(e).__name__, e))
                    self.failed.append(text)
                    with open(failed, "w") as f:
                        f.write(text)
                    raise
                with open(done, "w") as f:
                    f.write(key + "\n")
                self.built += 1
        self._modules[key] = module
        return module

    def _cached_failure(self, name, path):
        """Raises the failure kept for this build, as the build raised it."""
        with open(path) as f:
            text = f.read()
        self.failed.append(text)
        raise RuntimeError("Error building extension '%s' (cached failure): %s" % (name, text))

    def info(self):
        """worker_info lines: the counts (evaluate.cpp reads them), and the
        first failed build's first error line, so that a kernel whose build
        failed and which fell back to its own PyTorch path says why."""
        lines = ["extensions imported=%d built=%d" % (self.imported, self.built)]
        if self.failed:
            # The compiler's own diagnostic (`file.cu(12): error: ...`,
            # `file.cpp:3:10: error: ...`) before torch's "Error building
            # extension" header, which names only the command.
            lines.append("extension_failed %s" % failure_line(self.failed[0]))
        return lines


def set_aside_dead_build(where):
    """Called with the key's flock held and no DONE in where: a torch build
    lock there belongs to a builder that died (a live one would hold the
    flock). The directory is renamed, so that compilers still running in it
    (their outputs are relative to it) write into the renamed one, which is
    then removed as far as they let it; where starts empty."""
    if not os.path.exists(os.path.join(where, "lock")):
        return
    aside = "%s.dead-%d-%d" % (where, os.getpid(), time.monotonic_ns())
    os.rename(where, aside)
    os.makedirs(where)
    shutil.rmtree(aside, ignore_errors=True)


def kept_failure(whole, limit=4000):
    """What a failed build keeps of its message (the worker's info, the
    cache's FAILED file): the last `limit` characters, with the compiler's
    first error line in front when the notes after it pushed it out (a
    candidate's undeclared `forward` brings a page of "did you mean" notes
    from torch's headers).

    >>> kept = kept_failure("main.cpp:4:50: error: 'forward' was not declared\\n" + "note: see here\\n" * 1000)
    >>> kept.splitlines()[0], len(kept) < 4100
    ("main.cpp:4:50: error: 'forward' was not declared", True)
    """
    text = whole[-limit:]
    first = failure_line(whole)
    return text if first in text else first + "\n" + text


_DIAGNOSTIC = re.compile(r"(:\d+:(\d+:)?|\(\d+\):)\s*(fatal )?error\b", re.IGNORECASE)


def failure_line(text):
    """The line of a failed build that says why: the compiler's first
    diagnostic (`file.cu(12): error: ...`, `file.cpp:3:10: error: ...`,
    `fatal error`, in the candidate's files or in a header it broke), else
    the first other line naming an error, else what ninja's log ends with (a
    compiler killed, a linker's message), never torch's "Error building
    extension" header nor the command lines ("[1/3] nvcc ...", "FAILED:
    ..."), which name only what ran.

    >>> failure_line("Error building extension 'x':\\n[1/3] c++ -c main.cpp\\nFAILED: main.o\\n"
    ...              "/tmp/x/main.cpp:4:50: error: 'forward' was not declared in this scope\\n"
    ...              "/opt/t/include/ATen/core/interned_strings.h:353:1: note: 'c10::attr::forward' declared here\\n"
    ...              "ninja: build stopped: subcommand failed.")
    "/tmp/x/main.cpp:4:50: error: 'forward' was not declared in this scope"
    >>> failure_line("/usr/include/c++/12/bits/stl_vector.h:90:3: error: expected ';' before 'x'")
    "/usr/include/c++/12/bits/stl_vector.h:90:3: error: expected ';' before 'x'"
    >>> failure_line("[2/3] nvcc -c cuda.cu\\nptxas info    : Used 30 registers\\nptxas info    : Compile time = 98 ms")
    'ptxas info    : Used 30 registers | ptxas info    : Compile time = 98 ms'
    """
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    header = "Error building extension"
    commands = ("[", "FAILED:", "ninja: build stopped", "/usr/", "/opt/", "c++ ", "g++ ", "nvcc ")
    for l in lines:
        if _DIAGNOSTIC.search(l) and header not in l:
            return l[:300]
    for l in lines:
        if "error" in l.lower() and ":" in l and header not in l and not l.startswith(commands):
            return l[:300]
    told = [l for l in lines if header not in l and not l.startswith(commands)]
    return " | ".join(told[-2:])[:300] if told else (lines[0][:300] if lines else "")
