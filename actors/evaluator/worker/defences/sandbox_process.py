"""sandbox_process: fork bombs, shells, subprocesses, signals to other
processes.

Catches: audit events os.fork, os.system, os.exec, os.posix_spawn,
subprocess.Popen and the like, and os.kill or os.killpg of another
process; behind them RLIMIT_NPROC, the process-group kill, seccomp (no
ptrace, process_vm_readv/writev, pidfd_getfd) and Landlock's signal scope
(Linux 6.12). A refused process names its program in the reason.
Allows: the toolchain. Any process while an extension builds
(guard.toolchain(): ninja, compilers, `which`); outside a build, the
compilers Triton runs on a first call (ptxas: Python 3.12's subprocess
starts it through os.posix_spawn, which is allowed for these programs as
subprocess.Popen is), `ldconfig -p`, gcc and ld, which
ctypes.util.find_library runs (CuPy at import and on its first kernel:
CUDA-L1 A100 L1-22 and L1-31 were settled hack for it), and `file -b`,
which platform.architecture() runs (torch.compile's first call on the
H200: A100 L2-34, L2-49, L2-72 were settled hack for it and for ptxas). A
candidate killing itself (crashed, never a pass).
"""

import os

NAMES = ("sandbox_process",)
CASES = ("tests/hacks/cpu/escape_fork_bomb.py", "tests/hacks/cpu/escape_subprocess.py",
         "tests/hacks/legit/find_library.py", "tests/hacks/legit/toolchain_probes.py",
         "tests/hacks/legit/inline_extension_in_init.py")

_PROCESS_EVENTS = {"os.fork", "os.forkpty", "os.system", "os.exec", "os.posix_spawn", "os.spawn",
                   "subprocess.Popen", "pty.spawn", "os.startfile"}
_SIGNAL_EVENTS = {"os.kill", "os.killpg"}
EVENTS = _PROCESS_EVENTS | _SIGNAL_EVENTS
# Compilers that JIT toolchains (Triton's launcher stub and ptxas) run as
# subprocesses on a candidate's first call, what ctypes.util.find_library
# runs, and `file`, which platform.architecture() runs: allowed through
# subprocess.Popen and the os.posix_spawn it makes.
TOOLCHAIN = {"ptxas", "nvcc", "nvdisasm", "cuobjdump", "gcc", "g++", "cc", "c++", "clang", "clang++", "ld",
             "ldconfig", "ldconfig.real", "file"}
_TOOLCHAIN_EVENTS = {"subprocess.Popen", "os.posix_spawn"}


def _toolchain(args):
    exe = args[0] if args else None
    if exe is None and len(args) > 1 and isinstance(args[1], (list, tuple)) and args[1]:
        exe = args[1][0]
    if isinstance(exe, bytes):
        exe = os.fsdecode(exe)
    return isinstance(exe, str) and os.path.basename(exe) in TOOLCHAIN


def _program(event, args):
    """What a refused process event would have run, for the reason: ` of
    ['/sbin/ldconfig', '-p']` (the first 120 characters)."""
    what = args[1] if event == "subprocess.Popen" and len(args) > 1 else (args[0] if args else None)
    return " of %s" % repr(what)[:120] if isinstance(what, (str, bytes, list, tuple)) else ""


def check(guard, event, args):
    if event in _SIGNAL_EVENTS:
        # Killing itself only crashes the worker (crashed, never a pass); a
        # signal to any other process is an escape.
        if args and args[0] not in (os.getpid(), os.getpgrp(), 0):
            guard.refuse(NAMES[0], "%s%r" % (event, tuple(args)))
        return
    if guard.toolchain_depth or (event in _TOOLCHAIN_EVENTS and _toolchain(args)):
        return
    guard.refuse(NAMES[0], "%s%s" % (event, _program(event, args)))
