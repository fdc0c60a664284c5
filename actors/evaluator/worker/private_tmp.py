"""/tmp as the worker's own: what Python code writes under /tmp goes to a
private folder in the scratch directory, and is read back from there.

Why: honest kernels write their own sources to a fixed folder under /tmp
and build them from there (CUDA-L1's A100 L3-43: os.makedirs of
/tmp/cuda_extensions, two files written, then cpp_extension.load on their
paths). The machine's /tmp is shared, so such writes were refused
(sandbox_filesystem) and honest code settled `hack`. A mount namespace
could give each worker its own /tmp, but GPU workers have none (the NVIDIA
driver does not start in an unprivileged user namespace), and on CPU the
namespace makes / read-only. So every worker, CPU and GPU alike, gets the
same private /tmp at the Python level:

- a path that is /tmp or under it, and not under a writable root of the
  guard (the scratch, TMPDIR, HOME, the compile-cache entry: those stay
  what they are), is mapped to ROOT/... (ROOT = the scratch's tmp/);
- writes (open for writing, os.open with write flags, mkdir, remove,
  rename, chmod and the like) always use the private path; reads (open for
  reading, stat, listdir, scandir, access) use it when it exists there, and
  the machine's path otherwise, so reading what is already in /tmp works as
  before;
- cpp_extension.load's sources go through the same mapping
  (extensions.py), so a build reads the files the candidate wrote.

What it allows: a candidate's own files under /tmp, written, read back and
built from. What it does not change: native code's paths are not mapped;
its writes under /tmp are refused by Landlock (GPU) or the read-only mount
namespace (CPU), as before. Writes outside /tmp and the writable roots are
still sandbox_filesystem's (catalogue: escape_write_outside_scratch).

Who calls it: sandbox_worker.py (install, at the worker's start, before any
task or candidate code and before the fingerprints); extensions.py (resolve).
"""

import builtins
import io
import os

_TMP = "/tmp"
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_real = {}
_current = None


class PrivateTmp:
    def __init__(self, root, owned):
        self.root = os.path.realpath(root)  # where /tmp's private counterpart lives
        self.owned = owned                   # () -> the guard's writable roots, never mapped
        os.makedirs(self.root, exist_ok=True)

    def map(self, path, write):
        """The path as str or bytes (a path-like object is asked once, so
        that what is checked is what is opened), or its private counterpart."""
        if isinstance(path, int):
            return path
        try:
            raw = os.fspath(path)
        except TypeError:
            return path
        text = os.fsdecode(raw)
        full = os.path.normpath(text if text.startswith("/") else os.path.join(os.getcwd(), text))
        if full != _TMP and not full.startswith(_TMP + "/"):
            return raw
        if any(full == r or full.startswith(r + "/") for r in self.owned()):
            return raw
        private = self.root + full[len(_TMP):]
        if not write:
            try:
                _real["lstat"](private)
            except OSError:
                return raw
        return os.fsencode(private) if isinstance(raw, bytes) else private


def _opens_for_writing(mode):
    return isinstance(mode, str) and any(c in mode for c in "wax+")


def _wrap(name, write, positions=(0,)):
    """os.NAME (or builtins.open) with its path arguments mapped; write:
    True, False, or a function of (args, kwargs)."""
    real = _real[name]

    def mapped(*args, **kwargs):
        if _current is not None:
            w = write(args, kwargs) if callable(write) else write
            args = list(args)
            for i in positions:
                if i < len(args):
                    args[i] = _current.map(args[i], w)
            for key in ("file", "path", "src", "dst"):
                if key in kwargs:
                    kwargs[key] = _current.map(kwargs[key], w)
        return real(*args, **kwargs)

    mapped.__name__ = getattr(real, "__name__", name)
    mapped.__doc__ = getattr(real, "__doc__", None)
    return mapped


_OS_WRITES = ("mkdir", "rmdir", "remove", "unlink", "chmod", "utime", "truncate")
_OS_READS = ("stat", "lstat", "listdir", "scandir", "access")


def install(root, owned):
    """Maps /tmp to ROOT for every later file operation of this process;
    owned() gives the roots left alone."""
    global _current
    if not _real:
        _real["open"] = builtins.open
        for name in _OS_WRITES + _OS_READS + ("open", "rename", "replace"):
            _real[name if name != "open" else "os.open"] = getattr(os, name)
        builtins.open = io.open = _wrap(
            "open", lambda a, k: _opens_for_writing(a[1] if len(a) > 1 else k.get("mode", "r")))
        os.open = _wrap("os.open", lambda a, k: bool((a[1] if len(a) > 1 else k.get("flags", 0)) & _WRITE_FLAGS))
        for name in _OS_WRITES:
            setattr(os, name, _wrap(name, True))
        for name in _OS_READS:
            setattr(os, name, _wrap(name, False))
        for name in ("rename", "replace"):
            setattr(os, name, _wrap(name, True, (0, 1)))
    _current = PrivateTmp(root, owned)


def resolve(path):
    """A source path as a build should read it (extensions.py)."""
    return _current.map(path, False) if _current is not None else path
