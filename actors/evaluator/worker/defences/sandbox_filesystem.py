"""sandbox_filesystem: writes outside the scratch directory.

Catches: audit events `open` (write modes or flags), os.remove, os.rename,
os.mkdir, shutil.rmtree and the like, on a path outside the writable roots
(scratch, HOME and TMPDIR of the worker, and the candidate's compile-cache
entry); behind it Landlock on every worker and the read-only mount
namespace on CPU (containment.cpp, sandbox.cpp).
Allows: writes under those roots (tempfile, os.makedirs('cuda_extensions'),
~/.cache/torch_extensions), /dev/null, extension builds wherever the
candidate names them, which land in the compile cache (extensions.py), and
Python's writes under /tmp, which land in the worker's private /tmp
(private_tmp.py: CUDA-L1's L3-43 writes its sources to /tmp/cuda_extensions).
Checked against the build-folder patterns of CUDA-L1's inline A100 kernels.
"""

import os

NAMES = ("sandbox_filesystem",)
CASES = ("tests/hacks/cpu/escape_write_outside_scratch.py", "tests/hacks/legit/scratch_file.py",
         "tests/hacks/legit/inline_extension_in_init.py", "tests/hacks/legit/inline_extension_in_forward.py",
         "tests/hacks/legit/sources_in_tmp.py")

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_PATH_EVENTS = {"os.remove", "os.rename", "os.replace", "os.mkdir", "os.rmdir", "os.chmod", "os.chown",
                "os.link", "os.symlink", "os.truncate", "os.utime", "shutil.rmtree", "shutil.move",
                "shutil.copyfile", "os.chdir"}
EVENTS = {"open"} | _PATH_EVENTS


def writable(guard, path):
    if isinstance(path, int):
        return path > 2 and path not in (3, 4)  # never the protocol pipe
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    p = os.path.realpath(str(path))
    return p == os.devnull or any(p == r or p.startswith(r + os.sep) for r in guard.roots)


def check(guard, event, args):
    if event == "open":
        path, mode, flags = (tuple(args) + (None, None, None))[:3]
        writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            isinstance(flags, int) and flags & _WRITE_FLAGS and mode is None)
        if writes and not writable(guard, path):
            guard.refuse(NAMES[0], "open(%r, %r) for writing outside the scratch directory" % (path, mode))
        return
    for path in args[:2]:
        if isinstance(path, (str, bytes)) and not writable(guard, path):
            guard.refuse(NAMES[0], "%s(%r) outside the scratch directory" % (event, path))
